#!/usr/bin/python3
"""knative/tools/seccompprofile.py - writes the io-uring overlay's SeccompProfile
(knative/overlays/io-uring/seccompprofile.yaml) from container/seccomp.json.

One source: container/seccomp-gen runs this whenever it writes container/seccomp.json, and
tests/knative/validate fails when the file is not what this writes. The conversion is
benchmarks/lib/primedlab/seccompprofile.py. Usage: knative/tools/seccompprofile.py
"""
import json
import sys

import pathlib, sys  # noqa: E401  the scripts' one package: benchmarks/lib/primedlab, found from any folder
sys.path.insert(0, str(next(p for p in pathlib.Path(__file__).resolve().parents if (p / "benchmarks/lib/primedlab").is_dir()) / "benchmarks/lib"))
from primedlab import seccompprofile  # noqa: E402


def main(argv):
    if len(argv) > 1:
        print(__doc__.strip(), file=sys.stderr if argv[1] not in ("-h", "--help") else sys.stdout)
        return 0 if argv[1] in ("-h", "--help") else 2
    with open(seccompprofile.SECCOMP_JSON) as f:
        text = seccompprofile.seccompprofile_text(json.load(f))
    with open(seccompprofile.PROFILE_YAML, "w") as f:
        f.write(text)
    print(f"wrote {seccompprofile.PROFILE_YAML}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
