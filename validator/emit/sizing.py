"""The answer of `clusterplan size` as text: the best designs side by side, then why the rest were rejected.

Drawn from the plain data of validator/workflows/size_rank.py `result_dict` (the JSON format is that data).
"""

from __future__ import annotations

from typing import Any

from validator.emit.planning import cell, text_table

TRAINING = (("days", "days"), ("mfu", "MFU"), ("facility_kw", "facility kW"), ("capex_usd", "capex $"),
            ("tco_usd", "run cost $"))
INFERENCE = (("replicas", "replicas"), ("ttft_ms", "TTFT p99 ms"), ("tpot_ms", "TPOT p99 ms"),
             ("output_tokens_per_s_per_gpu", "out tok/s/GPU"), ("cost_per_million_tokens", "$/Mtok"),
             ("facility_kw", "facility kW"), ("capex_usd", "capex $"), ("tco_usd", "TCO $/year"))
OBJECTIVES_NOTE = {
    "training": "smallest: fewest GPUs; capex: lowest BOM total; tco: lowest cost of the run (busy GPU-hours x "
                "cost per busy GPU-hour); fastest: fewest days to train",
    "inference": "smallest: fewest GPUs; capex: lowest BOM total; tco: lowest cost of ownership per year; "
                 "fastest: lowest p99 TTFT + output tokens x p99 TPOT at the target load",
}


def _layout(p: dict[str, int]) -> str:
    extra = "".join(f" x {k.upper()} {p[k]}" for k in ("cp", "ep") if p[k] > 1)
    return f"TP {p['tp']} x PP {p['pp']}{extra}" + (f" x DP {p['dp']}" if p["dp"] > 1 else "")


def size_text(data: dict[str, Any]) -> str:
    s = data["space"]
    out = [f"{data['name']} ({data['kind']}, {data['request']}): {s['points']:,} points searched, {s['feasible']:,} "
           f"meet every rule and limit checked before validation, {s['rejected']:,} rejected", ""]
    perf = TRAINING if data["kind"] == "training" else INFERENCE
    if data["designs"]:
        head = ["best for", "server", "fabric", "layout", "GPUs", "racks", *(h for _, h in perf), "warnings"]
        rows = [["; ".join(d["best_for"]), d["server"], d["fabric"] or "none", _layout(d["parallelism"]),
                 cell("gpus", d["gpus"]), cell("racks", d.get("racks")),
                 *(cell(k, d.get(k)) for k, _ in perf), str(d["warnings"])] for d in data["designs"]]
        out += ["best designs (" + OBJECTIVES_NOTE[data["kind"]] + ")",
                text_table(head, rows, [False] * 4 + [True] * (len(head) - 4))]
        bases = sorted({d["days_basis"] for d in data["designs"] if d.get("days_basis")})
        out += [f"days to train: {b}" for b in bases]
    else:
        out += ["no design meets the request: every point was rejected (below)", ""]
    if data["rejected"]:
        head = ["rejected by", "points", "stage", "smallest such point", "why (for that point)"]
        rows = [[f"{r['reason']} {r['title']}".strip(), f"{r['points']:,}", r["stage"], r["example"], r["message"]]
                for r in data["rejected"]]
        out += ["why the other points were rejected (a rule id, or the request's limit or deadline)",
                text_table(head, rows, [False, True, False, False, False])]
    files = [f for d in data["designs"] for f in d["files"]]
    if files:
        out.append("written: " + ", ".join(files) + "\n")
    return "\n".join(out)
