#!/usr/bin/python3
"""tests/docs/blocks_test.py - docs/publish/blocks.py: find, outside, replace on small pages,
and every malformed page it must refuse (suite manifests, meson test 'docs-blocks')."""
import sys

import pathlib, sys  # noqa: E401  the scripts' one package: benchmarks/lib/primedlab, found from any folder
sys.path.insert(0, str(next(p for p in pathlib.Path(__file__).resolve().parents if (p / "benchmarks/lib/primedlab").is_dir()) / "benchmarks/lib"))
from primedlab import blocks  # noqa: E402
from primedlab.tap import Tap  # noqa: E402

T = Tap()
check = T.ok

page = "intro 3 ms\n<!-- generated boot from 2026-12-04-1420 -->\n| a | 9.4 ms |\n<!-- end generated -->\ntail\n"
b = blocks.find(page)
check(len(b) == 1 and b[0]["name"] == "boot" and b[0]["run"] == "2026-12-04-1420", "find names the block and its run")
check(b[0]["body"] == "| a | 9.4 ms |" and (b[0]["first"], b[0]["last"]) == (2, 4), "find gives the body and the marker lines")
check([l for _, l in blocks.outside(page)] == ["intro 3 ms", "tail", ""], "outside skips the block and its markers")
new = blocks.replace(page, "boot", "2026-12-05-0900", "| a | 8.0 ms |\n")
check("| a | 8.0 ms |" in new and "9.4 ms" not in new and "from 2026-12-05-0900" in new, "replace swaps the body and the run")
check(new.startswith("intro 3 ms\n") and new.endswith("tail\n"), "replace keeps the text around the block")
check(blocks.replace(new, "boot", "2026-12-05-0900", "| a | 8.0 ms |") == new, "replace is idempotent")
for bad, what in [
    ("<!-- generated a from r -->\nx\n", "an unclosed block"),
    ("x\n<!-- end generated -->\n", "an end without a begin"),
    ("<!-- generated a from r -->\n<!-- generated b from r -->\n<!-- end generated -->\n<!-- end generated -->\n", "a nested block"),
    ("<!-- generated a from r -->\n<!-- end generated -->\n<!-- generated a from r -->\n<!-- end generated -->\n", "a name used twice"),
    ("<!-- generated a -->\n<!-- end generated -->\n", "a begin without its run"),
]:
    try:
        blocks.find(bad)
        check(False, "find refuses " + what)
    except blocks.BlockError:
        check(True, "find refuses " + what)
try:
    blocks.replace(page, "memory", "r", "x")
    check(False, "replace refuses a block the page does not have")
except blocks.BlockError:
    check(True, "replace refuses a block the page does not have")
sys.exit(T.finish())
