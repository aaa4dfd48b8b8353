"""Benchmark designs of 1k, 10k and 100k GPUs (training: 3-tier rail-optimized RoCE at the large end;
inference: fleets of 8-GPU replicas) and a GB300 NVL72 site of 1k to 1M GPUs (two 400G planes, three tiers in
pods of 224 racks, the out-of-band network in zones of 224 racks: tests/fixtures/scale/site-1m-gpus.yaml at
1M). Run: python benchmarks/generate.py OUT_DIR"""

from __future__ import annotations

import sys
from pathlib import Path

TRAINING = """apiVersion: clusterplan/v1
kind: TrainingCluster
metadata: {{name: bench-training-{gpus}}}
site:
  rack: {{model: rack-48u, power_budget_kw: 48, cooling: rear-door, rear_door: rdhx-active-75}}   # network racks: 44 kW
  pue: 1.3
  layout: {{racks_per_row: 16}}
compute: {{server: dgx-h100, count: {servers}, servers_per_rack: 4}}
fabrics:
  compute:
    type: roce
    speed_gbps: 400
    topology: rail-optimized{pod}
    tiers:
      leaf: {{switch: sn5600}}
      spine: {{switch: sn5600}}{core}
    lossless:
      switch:
        pfc_priorities: [3]
        dscp_to_tc: {{26: 3, 48: 6}}
        roce_tc: 3
        cnp_tc: 6
        ecn: {{min_threshold_kb: 150, max_threshold_kb: 1500, probability_pct: 100}}
        pfc_watchdog: {{enabled: true, detection_ms: 200, restoration_ms: 400}}
      nic: {{pfc_priorities: [3], roce_dscp: 26, roce_priority: 3, cnp_dscp: 48}}
  storage:
    type: roce
    speed_gbps: 200               # DGX storage adapters: dual-port QSFP112 ConnectX-7, 2 x 200G
    tiers:
      leaf: {{switch: sonic-th5-64x800, uplink_speed_gbps: 400}}
      spine: {{switch: sonic-th5-64x800}}
  inband:
    type: ethernet
    speed_gbps: 200
    tiers:
      leaf: {{switch: sn4600c-200}}
      spine: {{switch: sn4600c-200}}
  oob:
    type: ethernet
    speed_gbps: 1
    tiers:
      leaf: {{switch: sn2201}}
      spine: {{switch: sn4600c}}
storage: {{type: parallel-fs, write_gbytes_s: 4000, nodes: {{count: {storage}, ports: 2}}}}
training:
  model: gpt3-175b
  parallelism: {{tp: 8, pp: 8, dp: {dp}, vpp: 3}}
  sequence_length: 2048
  global_batch: {batch}
  precision: bf16
  tokens: 15.0e12
"""

INFERENCE = """apiVersion: clusterplan/v1
kind: InferenceFleet
metadata: {{name: bench-inference-{gpus}}}
site:
  rack: {{model: rack-48u, power_budget_kw: 44, cooling: rear-door, rear_door: rdhx-active-75}}
  layout: {{racks_per_row: 32}}
compute: {{server: dgx-h200, count: {servers}, servers_per_rack: 4}}
fabrics:
  compute:
    type: ethernet
    speed_gbps: 400
    tiers:
      leaf: {{switch: sonic-th5-64x800}}
      spine: {{switch: sonic-th5-64x800}}
  oob:
    type: ethernet
    speed_gbps: 1
    tiers:
      leaf: {{switch: sn2201}}
      spine: {{switch: sn4600c}}
inference:
  model: llama3-70b
  replica: {{gpus: 8, tp: 8}}
  replicas: {servers}
  weight_precision: fp8
  kv_precision: fp8
  prompt_tokens: 2048
  output_tokens: 512
  max_context_tokens: 8192
"""

SITE = """apiVersion: clusterplan/v1
kind: TrainingCluster
metadata: {{name: bench-site-{gpus}}}
site:
  rack: {{model: rack-48u, power_budget_kw: 150, cooling: liquid, cdu: cdu-row-2500, racks_per_cdu: 16}}
  pue: 1.2
  layout: {{racks_per_row: 32, {halls}}}
compute: {{server: gb300-nvl72-tray, count: {servers}, servers_per_rack: 18}}
fabrics:
  compute:
    type: roce
    speed_gbps: 400
    topology: rail-optimized
    planes: 2
    plane_of: port
    scalable_unit: {{racks: 7}}{pod}
    tiers:
      leaf: {{switch: sn6600-ld}}
      spine: {{switch: sn6600-ld{spine_up}}}{core}
    lossless:
      switch:
        pfc_priorities: [3]
        dscp_to_tc: {{26: 3, 48: 6}}
        roce_tc: 3
        cnp_tc: 6
        ecn: {{min_threshold_kb: 150, max_threshold_kb: 1500, probability_pct: 100}}
        pfc_watchdog: {{enabled: true, detection_ms: 200, restoration_ms: 400}}
      nic: {{pfc_priorities: [3], roce_dscp: 26, roce_priority: 3, cnp_dscp: 48}}
  oob:
    type: ethernet
    speed_gbps: 1
    zones: {{racks: 224}}
    tiers:
      leaf: {{switch: sn2201}}
      spine: {{switch: sn4600c}}{oob_core}
training:
  model: llama3-70b
  parallelism: {{tp: 8, pp: 4, dp: {dp}}}
  sequence_length: 8192
  global_batch: {batch}
  precision: fp8
  tokens: 2.0e12
"""

SIZES = (1024, 10240, 102400)
SITE_SIZES = (1024, 10240, 102400, 1016064)


def site_racks(gpus: int) -> int:
    """GB300 NVL72 racks of the site closest to `gpus` GPUs: whole scalable units of 7 racks in one pod, whole
    pods of 224 racks above (100k: 6 pods, 1,344 racks, 96,768 GPUs; 1M: 63 pods, 14,112 racks, 1,016,064)."""
    racks = gpus / 72
    return max(7, round(racks / 7) * 7) if racks <= 224 else round(racks / 224) * 224


def write_site(out: Path, gpus: int) -> Path:
    racks = site_racks(gpus)
    servers = racks * 18
    dp = servers * 4 // 32          # 4 GPUs a tray, tp 8 x pp 4
    big = racks > 224               # above one pod: three tiers in pods of 224 racks
    pod = "\n    pod: {gpus: 16128}" if big else ""
    core = "\n      core: {switch: sn6600-ld}" if big else ""
    # the out-of-band zones in three tiers as at 1M; below, two (the sizes docs/performance.md measured; a site
    # of 5 to 14 pods with three-tier zones validates too since expand/oob.py takes each role's widest layout:
    # tests/test_floor.py)
    oob_core = "\n      core: {switch: sn4600c}" if racks >= 14112 else ""
    # in pods, the floor and the spine uplinks of tests/fixtures/scale/site-1m-gpus.yaml: 45 rows a hall (5 pods),
    # halls on both sides of the corridor and 800G spine-core links, so every run is within its media's reach
    halls = "rows_per_hall: 45, hall_sides: 2" if big else "rows_per_hall: 44"
    spine_up = ", uplink_speed_gbps: 800" if big else ""
    path = out / f"site-{gpus}.yaml"
    path.write_text(SITE.format(gpus=gpus, servers=servers, dp=dp, batch=dp * 2, pod=pod, core=core,
                                oob_core=oob_core, halls=halls, spine_up=spine_up))
    return path


def write(out: Path) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    for gpus in SIZES:
        servers = gpus // 8
        dp = servers // 8
        train = out / f"training-{gpus}.yaml"
        storage = max(8, servers // 16)
        # above one core layer's reach the compute fabric needs pods: 4,096 GPUs (512 DGX) per pod of
        # 64-port-at-800G SN5600 leaves and spines keeps every pod within the spines' 64 downlinks
        pod = "\n    pod: {gpus: 4096}" if gpus > 10240 else ""
        core = "\n      core: {switch: sn5600}" if pod else ""
        train.write_text(TRAINING.format(gpus=gpus, servers=servers, dp=dp, batch=dp * 4, storage=storage, pod=pod,
                                         core=core))
        infer = out / f"inference-{gpus}.yaml"
        infer.write_text(INFERENCE.format(gpus=gpus, servers=servers))
        paths += [train, infer]
    paths += [write_site(out, gpus) for gpus in SITE_SIZES]
    return paths


if __name__ == "__main__":
    for p in write(Path(sys.argv[1] if len(sys.argv) > 1 else "bench-designs")):
        print(p)
