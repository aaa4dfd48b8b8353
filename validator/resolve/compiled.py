"""The built-in catalog and price books, pre-parsed.

The YAML files under validator/resolve/catalog/data/ are the source of every built-in figure.
`compiled.json` beside them holds what validator/read/loader.py reads from each (plain JSON values)
with a CRC-32 of the file's text, because parsing 70 KB of YAML costs about 15 ms of every cold start
and reading JSON half a millisecond. A file whose text no longer matches its CRC is read from its YAML
(slower, never stale). `python -m validator.resolve.compiled` rewrites compiled.json; the suite fails
while it is out of date (tests/test_trusted.py).
"""

import json
import zlib
from functools import cache
from pathlib import Path
from typing import Any

from validator.read.loader import load_yaml, read_text

DATA_DIR = Path(__file__).resolve().parent / "catalog" / "data"
COMPILED = DATA_DIR / "compiled.json"


def builtin_data(rel: str) -> Any:
    """The data of a built-in YAML file (`rel` to the data directory, e.g. `prices/street.yaml`)."""
    text = read_text(DATA_DIR / rel, f"<builtin>/{rel}")
    entry = _compiled().get(rel)
    if isinstance(entry, dict) and entry.get("crc32") == _crc(text):
        return entry["data"]
    return load_yaml(text, f"<builtin>/{rel}").data


@cache
def _compiled() -> dict[str, Any]:
    try:
        data = json.loads(COMPILED.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _crc(text: str) -> int:
    return zlib.crc32(text.encode("utf-8"))


def compiled_text() -> str:
    """compiled.json as it should be: every YAML file under the data directory, in path order."""
    out = {}
    for path in sorted(DATA_DIR.rglob("*.yaml")):
        rel = path.relative_to(DATA_DIR).as_posix()
        text = read_text(path, f"<builtin>/{rel}")
        out[rel] = {"crc32": _crc(text), "data": load_yaml(text, f"<builtin>/{rel}").data}
    return json.dumps(out, indent=1, ensure_ascii=False) + "\n"     # mapping order as in the YAML


if __name__ == "__main__":
    COMPILED.write_text(compiled_text(), encoding="utf-8")
    print(f"wrote {COMPILED}")
