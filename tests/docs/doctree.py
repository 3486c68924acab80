"""tests/docs/doctree.py - a copy of the user docs to publish into: the publish tests' one set-up.

copy(root, tmp): README.md, docs/, tests/docs/constants and words, and benchmarks/ksim (the model's data
files, which their own blocks name as their run) from the repository at root into tmp/tree;
returns (tree, its docs folder).
"""
import os
import shutil


def copy(root, tmp):
    tree = os.path.join(tmp, "tree")
    os.makedirs(os.path.join(tree, "tests", "docs"))
    shutil.copy(os.path.join(root, "README.md"), tree)
    shutil.copytree(os.path.join(root, "docs"), os.path.join(tree, "docs"))
    for f in ("constants", "words"):
        shutil.copy(os.path.join(root, "tests", "docs", f), os.path.join(tree, "tests", "docs"))
    shutil.copytree(os.path.join(root, "benchmarks", "ksim"), os.path.join(tree, "benchmarks", "ksim"))
    return tree, os.path.join(tree, "docs")
