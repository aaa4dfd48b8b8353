"""Switch configuration skeletons, the BOM and the cabling plan, written to a directory.

Templates live in templates/ (shipped in the package); a design repository may supply its own with
`templates:` in the design, which then render in Jinja's sandbox. Every template runs with
StrictUndefined: a missing fact is an error, never an empty string.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

from validator.base.errors import DesignError
from validator.base.facts import fact
from validator.base.paths import OutsideRepository, confine, repository_root
from validator.base.resources import resource_dir
from validator.base.tables import values
from validator.check.result import Analysis
from validator.derive.cabling import Plan
from validator.derive.switch_os import port_cable_lengths
from validator.emit import tables
from validator.emit.escape import one_line, yaml_string
from validator.emit.files import OutputSet
from validator.emit.progress import Stage, stage
from validator.emit.render.background import write_beside
from validator.emit.render.build import ROUTED_FABRICS, device_configs
from validator.emit.render.device import DeviceConfig
from validator.emit.render.notes import Notes
from validator.emit.render.oob import FABRIC as OOB
from validator.emit.render.oob import mgmt_peers, oob_configs
from validator.emit.render.opensm import ADAPTIVE_FILE, PARTITIONS_FILE, ib_facts, ibdm_topology
from validator.emit.render.switch_os import plugin_for
from validator.emit.render.workers import merge_notes, split, start_worker
from validator.expand.topology import Topology
from validator.read.loader import read_text

# Escaping of free text (a catalog name, a description) for each configuration syntax: every template,
# built-in or the design repository's, can use them (docs/security.md).
ESCAPES = {"config_text": one_line,        # one line of an EOS/NVUE/OpenSM config or comment, no controls
           "yaml_string": yaml_string}     # a double-quoted YAML scalar on one line (NVUE startup.yaml)



class TemplateError(Exception):
    """A template failed to render (a design-supplied template, usually)."""


@fact
class Rendered:
    path: str        # relative to the output directory
    text: str


def user_templates(design: Path, rel: str | None) -> Path | None:
    """The design's `templates:` directory: it must resolve, symlinks followed, to a directory inside the
    design's repository (TemplateError otherwise)."""
    if rel is None:
        return None
    try:
        path = confine(design.parent / rel, repository_root(design), "templates directory")
    except OutsideRepository:
        raise TemplateError(f"{design}: templates '{rel}' must be a directory inside the design repository") \
            from None
    if not path.is_dir():
        raise TemplateError(f"{design}: templates directory '{rel}' not found")
    return path


def _repository_loader(directory: Path, root: Path) -> Any:
    """A Jinja loader for a design repository's templates: each template (and each one it includes or
    extends) must resolve inside the repository and be a regular file within the size limit; it is
    checked before it is read, so a symlink out of the repository or a named pipe is never opened."""
    from jinja2 import BaseLoader, TemplateNotFound
    from jinja2.loaders import split_template_path

    class RepositoryLoader(BaseLoader):
        def get_source(self, environment: Any, template: str) -> tuple[str, str, Any]:
            path = directory.joinpath(*split_template_path(template))
            if not os.path.lexists(path):
                raise TemplateNotFound(template)
            try:
                real = confine(path, root, f"template {template}")
                text = read_text(real, template)
            except OutsideRepository as exc:
                raise TemplateError(str(exc)) from None
            except DesignError as exc:
                raise TemplateError(f"template {template}: {exc.diagnostics[0].message}") from None
            return text, str(real), lambda: False

    return RepositoryLoader()


class _Templates:
    """Built-in templates render in a plain Environment (trusted, fast); a template the design
    repository supplies (same name, in its `templates:` directory) renders in the sandbox."""

    def __init__(self, user_dir: Path | None) -> None:
        from jinja2 import Environment, FileSystemLoader, StrictUndefined

        from validator.emit.render.sandbox import UserSandbox

        options: dict[str, Any] = {"undefined": StrictUndefined, "keep_trailing_newline": True, "autoescape": False}
        self.builtin = Environment(loader=FileSystemLoader(str(resource_dir("templates"))), **options)
        self.user = UserSandbox(loader=_repository_loader(user_dir, repository_root(user_dir)),
                                **options) if user_dir else None
        self.user_dir = user_dir
        from validator.emit.render.bom import FILTERS

        for env in (self.builtin, self.user):
            if env is not None:
                env.policies["json.dumps_kwargs"] = {"sort_keys": True, "ensure_ascii": False}
                env.filters.update(FILTERS)
                env.filters.update(ESCAPES)
        if self.user is not None:
            self.user.budgeted(self.user.filters)
        self._cache: dict[str, Any] = {}

    def _template(self, name: str) -> Any:
        if name not in self._cache:
            own = self.user is not None and self.user_dir is not None and os.path.lexists(self.user_dir / name)
            env = self.user if own and self.user is not None else self.builtin
            self._cache[name] = env.get_template(name)
        return self._cache[name]

    def render(self, name: str, **context: Any) -> str:
        """The template's text; a repository's template renders in the sandbox on copies, within its
        budget, and any exception it raises is a TemplateError `template NAME:LINE: message`."""
        from jinja2 import TemplateError as JinjaError

        from validator.emit.render.sandbox import describe, template_line

        template = None
        try:
            template = self._template(name)
            if template.environment is self.user and self.user is not None:
                text: str = self.user.render(template, context)
            else:
                text = template.render(**context)
        except TemplateError:
            raise
        except Exception as exc:    # a repository template is untrusted code: any exception is its error
            if template is not None and template.environment is self.builtin and not isinstance(exc, JinjaError):
                raise
            line = template_line(exc, [template.filename] if template is not None else [])
            raise TemplateError(f"template {name}:{line or 1}: {describe(exc)}") from exc
        return text if text.endswith("\n") else text + "\n"


def _device_files(env: _Templates, d: DeviceConfig, notes: Notes) -> Iterator[Rendered]:
    """A device's files from its OS's plug-in (switch_os.py PLUGINS); an OS with none is listed in
    NOTES.md, never skipped silently."""
    plugin = plugin_for(d.os)
    if plugin is None:
        notes.unrendered.setdefault(d.os, []).append(d.name)
        return
    for path, text in plugin.files(env.render, d, plugin.template, f"configs/{d.fabric}/{d.name}"):
        yield Rendered(path, text)


def _oob_files(env: _Templates, topology: Topology, notes: Notes,
               count: Callable[[int], None]) -> Iterator[Rendered]:
    """The out-of-band switches (emit/render/oob.py): Cumulus Linux NVUE; any other OS is listed in
    NOTES.md as not rendered, never skipped silently."""
    release = values("switch_os.yaml")["nvue_release"]
    for o in oob_configs(topology):
        count(1)
        if o.os == "cumulus":
            notes.oob += 1
            yield Rendered(f"configs/{OOB}/{o.name}.startup.yaml",
                           env.render("nvue/oob.yaml.j2", o=o, n={"release": release}))
        else:
            notes.oob_unrendered.setdefault(o.os, []).append(o.name)


def switches_to_render(topology: Topology) -> int:
    """How many switches `render_configs` goes through (those of the routed Ethernet and OOB fabrics)."""
    fabrics = [topology.fabrics.get(name) for name in (*ROUTED_FABRICS, OOB)]
    return sum(f.switches for f in fabrics if f is not None and f.type != "infiniband" and f.buildable)


@fact
class Part:
    """Some of a routed fabric's switches (places in its order, 0-based) and the fabric's cable lengths, computed
    once for both processes that render it (workers.py). Each process works out the link ends itself: computed
    before the fork, the million tuples shared by both were copied page by page as each touched them (2-3 s
    more system time at 100k GPUs)."""

    fabric: str
    switches: range
    lengths: dict[str, dict[int, int]] | None


def fabric_part(topology: Topology, fabric: str, switches: range, plan: Plan | None) -> Part:
    return Part(fabric, switches, _lengths(topology, fabric, plan))


def _lengths(topology: Topology, fabric: str, plan: Plan | None) -> dict[str, dict[int, int]] | None:
    if getattr(topology.resolved.design.fabrics, fabric).lossless is None:
        return None
    return port_cable_lengths(plan or Plan(topology), fabric)


def _fabric_files(env: _Templates, topology: Topology, fabric: str, notes: Notes, peers: dict[str, str],
                  plan: Plan | None, part: Part | None = None) -> Iterator[Rendered | None]:
    """A routed fabric's configurations (those of `part` only, when given), None after each switch's."""
    lengths = part.lengths if part is not None else _lengths(topology, fabric, plan)
    for d in device_configs(topology, fabric, lengths, peers, part.switches if part is not None else None):
        notes.add(d)
        yield from _device_files(env, d, notes)
        yield None


def _rest(env: _Templates, topology: Topology, fabrics: list[str], notes: Notes, peers: dict[str, str],
          plan: Plan | None, count: Callable[[int], None], first: Part | None = None) -> Iterator[Rendered]:
    """The files of `first` (the end of a fabric a worker began), `fabrics`, the OOB switches and the InfiniBand
    fabrics (all of render_configs but NOTES.md and a worker's part)."""
    opensm = values("opensm.yaml")
    parts: list[tuple[str, Part | None]] = [(first.fabric, first)] if first is not None else []
    for fabric, part in [*parts, *((f, None) for f in fabrics)]:
        for item in _fabric_files(env, topology, fabric, notes, peers, plan, part):
            if item is None:
                count(1)
            else:
                yield item
    yield from _oob_files(env, topology, notes, count)
    for f in ib_facts(topology):
        yield Rendered(f"configs/{f.fabric}/opensm.conf",
                       env.render("opensm/opensm.conf.j2", f=f, sm_priority=opensm["sm_priority"],
                                  qos_max_vls=opensm["qos_max_vls"]))
        if f.adaptive is not None:
            # NVIDIA's subnet manager only: the same settings with its adaptive routing engine
            adaptive = replace(f, routing_engine=f.adaptive, routing_reason=f.adaptive_reason)
            yield Rendered(f"configs/{f.fabric}/{ADAPTIVE_FILE}",
                           env.render("opensm/opensm.conf.j2", f=adaptive, sm_priority=opensm["sm_priority"],
                                      qos_max_vls=opensm["qos_max_vls"]))
        yield Rendered(f"configs/{f.fabric}/{PARTITIONS_FILE}",
                       env.render("opensm/partitions.conf.j2", f=f, pkey=int(opensm["fabric_pkey"][f.fabric])))
        yield Rendered(f"configs/{f.fabric}/ibdiagnet.topo", "".join(ibdm_topology(topology, f.fabric)))


def render_configs(topology: Topology, user_templates: Path | None = None,
                   counter: Stage | None = None, plan: Plan | None = None,
                   out: OutputSet | None = None) -> Iterator[Rendered]:
    """Every switch configuration and subnet-manager file of the design, in a stable order, then
    configs/NOTES.md: what the network team must still fill in. `counter` counts the switches; `plan`
    is the analysis's cabling plan (its cage plan already built), else one is built for the lengths.
    With `out`, the first routed fabric may be written into it by a second process (workers.py): its
    files are then recorded in `out` ahead of these, where a serial render has them, and not yielded."""
    count: Callable[[int], None] = counter.advance if counter is not None else (lambda _n: None)
    env = _Templates(user_templates)
    notes = Notes()
    peers = mgmt_peers(topology)
    fabrics = [name for name in ROUTED_FABRICS if (fab := topology.fabrics.get(name)) is not None
               and fab.type != "infiniband" and fab.buildable]
    if plan is None and any(getattr(topology.resolved.design.fabrics, name).lossless is not None for name in fabrics):
        plan = Plan(topology)       # one for every fabric's cable lengths
    worker, mine = None, None
    if out is not None and fabrics:
        first = fabrics[0]
        switches = topology.fabrics[first].switches
        keep = split(switches, sum(topology.fabrics[f].switches for f in fabrics[1:]))
        theirs = fabric_part(topology, first, range(switches - keep), plan) if keep else None

        def files(child_notes: Notes) -> Iterator[tuple[str, str]]:
            for item in _fabric_files(env, topology, first, child_notes, peers, plan, theirs):
                yield ("", "") if item is None else (item.path, item.text)

        worker = start_worker(out, switches, files)
        if worker is not None:
            fabrics = fabrics[1:]
            if theirs is not None:       # this process renders the end of the fabric, then the others
                mine = replace(theirs, switches=range(switches - keep, switches))
    try:
        yield from _rest(env, topology, fabrics, notes, peers, plan, count, mine)
        if worker is not None and out is not None:
            base = counter.done if counter is not None else 0

            def show(n: int) -> None:
                if counter is not None:
                    counter.done = base + n

            records, child_notes = worker.finish(show)
            out.files = {**dict(records), **out.files}    # the first fabric's files first, as a serial render
            notes = merge_notes(child_notes, notes)
    except BaseException:        # this process failed, or was interrupted while it waited: stop the child
        if worker is not None:
            worker.abandon()
        raise
    yield Rendered("configs/NOTES.md", notes.text())


def render_all(analysis: Analysis, out_dir: Path, user_templates: Path | None = None) -> list[str]:
    """Write the configurations, BOM and cabling plan under `out_dir` as one set; returns the files written.

    The set is staged beside `out_dir` and swapped in whole (emit/files.py OutputSet): a kill or a
    template error leaves the previous set; files of a previous set that are no longer produced go;
    files in `out_dir` that clusterplan did not write stay.
    """
    topology, derived = analysis.topology, analysis.derived
    assert topology is not None and derived is not None
    with OutputSet(out_dir) as out:
        plan = derived.cabling
        links = plan.tally.links
        beside = write_beside(out, "cabling.csv", lambda: tables.cabling_csv_rows(plan), links)
        try:
            with stage("configurations (switches)", switches_to_render(topology)) as counter:
                for item in render_configs(topology, user_templates, counter, plan, out):
                    out.write(item.path, item.text)
            with stage("BOM"):
                out.write("bom.json", tables.bom_json(derived.bom))
                out.write("bom.csv", tables.bom_csv(derived.bom))
            if beside is not None:
                beside.finish("cabling", links)
            else:
                out.write_lines("cabling.csv", tables.cabling_csv_rows(plan))    # its own stage
        except BaseException:    # a template error, an interrupt: the cabling plan's process goes too
            if beside is not None:
                beside.abandon()
            raise
        with stage(f"write {len(out.files):,} files to disk"):
            out.commit()
    return out.written
