"""clusterplan: validate AI GPU cluster designs and generate their bill of materials.

The import package is `validator`; the pipeline reads top to bottom:
load -> schema check -> model -> resolve catalog -> topology -> rules -> estimate -> BOM -> render -> export.
"""

__version__ = "0.1.0"
