"""Switch operating systems as plug-ins: one entry per OS in `PLUGINS`, the only list the renderer
reads. An entry names the catalog's `os:` value, the built-in template (a design repository may
override it by name) and the function that turns one device's structured configuration
(device.py) into its files. What an OS can express (PFC watchdog grid, where lossless headroom comes
from, management interface and VRF names) is data in validator/data/switch_os.yaml, read by
derive/switch_os.py for the rules and the configurations alike. docs/architecture.md, "Add a switch
OS", walks through adding one.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from validator.base.facts import fact
from validator.base.tables import value
from validator.emit.render.device import DeviceConfig

RenderFn = Callable[..., str]                 # _Templates.render(template name, **context) -> text
FilesFn = Callable[[RenderFn, DeviceConfig, str, str], Iterator[tuple[str, str]]]


@fact
class SwitchOs:
    name: str          # the catalog's `os:` value
    title: str
    template: str      # built-in template, overridable by name from the design's `templates:`
    suffix: str        # configs/<fabric>/<switch>.<suffix>
    files: FilesFn     # (render, device, template, base path) -> (path, text) of every file of the device


def _sonic(render: RenderFn, d: DeviceConfig, template: str, base: str) -> Iterator[tuple[str, str]]:
    from validator.emit.render.sonic import sonic_json, sonic_tables

    data = sonic_tables(d)
    yield f"{base}.config_db.json", render(template, tables=sonic_json(data), data=data, d=d)


def _eos(render: RenderFn, d: DeviceConfig, template: str, base: str) -> Iterator[tuple[str, str]]:
    import yaml

    from validator.emit.render.eos import avd_structured_config

    avd = avd_structured_config(d)
    yield f"{base}.cfg", render(template, c=avd, d=d)
    dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
    yield f"{base}.avd.yml", yaml.dump(avd, Dumper=dumper, sort_keys=False, default_flow_style=False)


def nvue_context(d: DeviceConfig) -> dict[str, Any]:
    """NVUE facts: the release and the PFC watchdog as polling-interval x robustness (exactly the
    design's detection time, derive/switch_os.py)."""
    release = value("switch_os.yaml", "nvue_release")
    timers = d.timers
    return {"d": d, "n": {"release": release,
                          "pfcwd_poll_ms": timers.get("polling-interval") if timers else None,
                          "pfcwd_robustness": timers.get("robustness") if timers else None}}


def _nvue(render: RenderFn, d: DeviceConfig, template: str, base: str) -> Iterator[tuple[str, str]]:
    yield f"{base}.startup.yaml", render(template, **nvue_context(d))


PLUGINS: tuple[SwitchOs, ...] = (
    SwitchOs("sonic", "SONiC", "sonic/config_db.json.j2", "config_db.json", _sonic),
    SwitchOs("eos", "Arista EOS", "eos/running-config.j2", "cfg", _eos),
    SwitchOs("cumulus", "NVIDIA Cumulus Linux (NVUE)", "nvue/startup.yaml.j2", "startup.yaml", _nvue),
)


def plugin_for(os: str) -> SwitchOs | None:
    return next((p for p in PLUGINS if p.name == os), None)
