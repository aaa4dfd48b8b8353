"""clusterplan: validate AI GPU cluster designs and generate their bill of materials.

The import package is `validator`. A design goes through six stages, each a subpackage that imports
only the stages before it (import-linter's `layers` contract in pyproject.toml enforces the order):

    read     validator.read      YAML with positions -> schema check -> the Design model
    resolve  validator.resolve   catalog references and documented defaults -> Resolved
    expand   validator.expand    fabric sizing: switch tiers, groups and port budgets -> Topology
    derive   validator.derive    link plan, placement, media, estimate, BOM -> Derived (typed facts)
    check    validator.check     the engineering rules over the derived facts -> findings
    emit     validator.emit      text, JSON, SARIF, CSV, XLSX, switch configurations, files

`validator.pipeline` runs the stages in that order (`analyze`); `validator.workflows` builds on it
(diff, generated outputs) and `validator.commands` is the thin command-line layer over both.
`validator.base` holds what every stage shares (diagnostics, findings, limits, data files, paths).
"""

__version__ = "0.1.0"
