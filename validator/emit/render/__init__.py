"""Stage 9: switch configuration skeletons, the BOM and the cabling plan, written to a directory.

Templates live in templates/ (shipped in the package); a design repository may supply its own with
`templates:` in the design, which then render in Jinja's sandbox. Every template runs with
StrictUndefined: a missing fact is an error, never an empty string.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from validator.base.resources import load_data, resource_dir
from validator.check.result import Analysis
from validator.emit import tables
from validator.emit.escape import one_line, yaml_string
from validator.emit.files import write_atomic, write_atomic_lines
from validator.emit.render.facts import ROUTED_FABRICS, SwitchFact, ib_facts, switch_facts
from validator.emit.render.sonic import sonic_json, sonic_tables
from validator.expand.topology import Topology

# Escaping of free text (a catalog name, a description) for each configuration syntax: every template,
# built-in or the design repository's, can use them (docs/security.md).
FILTERS = {"config_text": one_line,        # one line of an EOS/NVUE/OpenSM config or comment, no controls
           "yaml_string": yaml_string}     # a double-quoted YAML scalar on one line (NVUE startup.yaml)

TEMPLATE_FOR_OS = {"sonic": ("sonic/config_db.json.j2", "config_db.json"),
                   "eos": ("eos/running-config.j2", "cfg"), "cumulus": ("nvue/startup.yaml.j2", "startup.yaml")}


class TemplateError(Exception):
    """A template failed to render (a design-supplied template, usually)."""


@dataclass(frozen=True)
class Rendered:
    path: str        # relative to the output directory
    text: str


class _Templates:
    """Built-in templates render in a plain Environment (trusted, fast); a template the design
    repository supplies (same name, in its `templates:` directory) renders in the sandbox."""

    def __init__(self, user_dir: Path | None) -> None:
        from jinja2 import Environment, FileSystemLoader, StrictUndefined
        from jinja2.sandbox import SandboxedEnvironment

        options: dict[str, Any] = {"undefined": StrictUndefined, "keep_trailing_newline": True, "autoescape": False}
        self.builtin = Environment(loader=FileSystemLoader(str(resource_dir("templates"))), **options)
        self.user = SandboxedEnvironment(loader=FileSystemLoader(str(user_dir)), **options) if user_dir else None
        self.user_dir = user_dir
        for env in (self.builtin, self.user):
            if env is not None:
                env.policies["json.dumps_kwargs"] = {"sort_keys": True, "ensure_ascii": False}
                env.filters.update(FILTERS)
        self._cache: dict[str, Any] = {}

    def _template(self, name: str) -> Any:
        if name not in self._cache:
            own = self.user is not None and self.user_dir is not None and (self.user_dir / name).is_file()
            env = self.user if own and self.user is not None else self.builtin
            self._cache[name] = env.get_template(name)
        return self._cache[name]

    def render(self, name: str, **context: Any) -> str:
        from jinja2 import TemplateError as JinjaError

        try:
            text: str = self._template(name).render(**context)
        except JinjaError as exc:
            raise TemplateError(f"template {name}: {exc}") from exc
        return text if text.endswith("\n") else text + "\n"


def _eos_context(fact: SwitchFact) -> dict[str, Any]:
    ll = fact.lossless
    if ll is None:
        return {"s": fact, "dscp_roce": [], "dscp_cnp": []}
    sw = ll.switch
    return {"s": fact, "dscp_roce": sorted(int(d) for d, tc in sw.dscp_to_tc.items() if tc == sw.roce_tc),
            "dscp_cnp": sorted(int(d) for d, tc in sw.dscp_to_tc.items() if sw.cnp_tc is not None and tc == sw.cnp_tc)}


def render_configs(topology: Topology, user_templates: Path | None = None) -> Iterator[Rendered]:
    """Every switch configuration and subnet-manager file of the design, in a stable order."""
    env = _Templates(user_templates)
    opensm = {k: v["value"] for k, v in load_data("opensm.yaml").items()}
    for fabric in ROUTED_FABRICS:
        fab = topology.fabrics.get(fabric)
        if fab is None or fab.type == "infiniband":
            continue
        for fact in switch_facts(topology, fabric):
            template, suffix = TEMPLATE_FOR_OS.get(fact.model.os, TEMPLATE_FOR_OS["sonic"])
            if fact.model.os == "sonic":
                data = sonic_tables(fact)
                text = env.render(template, tables=sonic_json(fact, data), data=data, s=fact)
            elif fact.model.os == "eos":
                text = env.render(template, **_eos_context(fact))
            else:
                text = env.render(template, s=fact)
            yield Rendered(f"configs/{fabric}/{fact.name}.{suffix}", text)
    for f in ib_facts(topology):
        partitions = f"/etc/opensm/partitions-{f.fabric}.conf"
        yield Rendered(f"configs/{f.fabric}/opensm.conf",
                       env.render("opensm/opensm.conf.j2", f=f, sm_priority=opensm["sm_priority"],
                               qos_max_vls=opensm["qos_max_vls"], partitions_path=partitions))
        yield Rendered(f"configs/{f.fabric}/partitions.conf",
                       env.render("opensm/partitions.conf.j2", f=f, pkey=int(opensm["fabric_pkey"][f.fabric])))


def render_all(analysis: Analysis, out_dir: Path, user_templates: Path | None = None) -> list[str]:
    """Write the configurations, BOM and cabling plan under `out_dir`; returns the files written.

    Each file is written atomically; files already in `out_dir` that clusterplan did not write are
    left alone.
    """
    from validator.emit.progress import progress

    topology, derived = analysis.topology, analysis.derived
    assert topology is not None and derived is not None
    written = []
    total = sum(f.switches for f in topology.fabrics.values())
    for item in progress(render_configs(topology, user_templates), total, "configs"):
        write_atomic(out_dir / item.path, item.text)
        written.append(item.path)
    plan = derived.cabling
    bom = derived.bom
    write_atomic(out_dir / "bom.json", tables.bom_json(bom))
    write_atomic(out_dir / "bom.csv", tables.bom_csv(bom))
    write_atomic_lines(out_dir / "cabling.csv", tables.cabling_csv_rows(plan))
    written += ["bom.json", "bom.csv", "cabling.csv"]
    return written
