"""knative/tools/kustomize.py - the manifests' kustomize renderer, offline.

Owns render(DIR), the resources (dicts) of exactly the features knative/ uses, in kustomize's
order: resources; patches (a strategic merge, or JSON 6902 test/replace/add on a target);
namespace (Knative Services only); nameSuffix; images newName/newTag. Anything else is a
RenderError, so a new feature cannot slip in unrendered. Debian's kubectl embeds kustomize 2.0.3,
which cannot render `patches:`; where one with kustomize >= v4 runs, kubectl_kustomize() and
canon() compare its output with ours. Used by tests/knative/validate and tests/monitoring/.
Never writes a file, never judges a manifest. Needs PyYAML (python3-yaml).
"""
import copy
import json
import os
import re
import shutil
import subprocess

import yaml

KUSTOMIZATION_FIELDS = {"apiVersion", "kind", "resources", "patches", "namespace", "nameSuffix", "images"}
# The kinds `namespace:` is implemented for: those where kustomize sets metadata.namespace and
# nothing else (it also rewrites RoleBinding subjects and skips cluster-scoped kinds).
NAMESPACED_KINDS = {("serving.knative.dev", "Service")}
# kyaml's keys for merging lists of maps when there is no schema (a CRD such as Knative's).
ASSOCIATIVE_KEYS = ("mountPath", "devicePath", "ip", "type", "topologyKey", "name", "containerPort")


class RenderError(Exception):
    pass


def docs_of(text):
    """The YAML documents of text (a string or a file), empty ones left out."""
    return [d for d in yaml.safe_load_all(text) if d is not None]


def load_docs(path):
    with open(path) as f:
        return docs_of(f)


def render(d, _stack=()):
    """Render the kustomization in directory d; returns a list of resources (dicts)."""
    d = os.path.abspath(d)
    if d in _stack:
        raise RenderError(f"{d}: resource cycle")
    kf = os.path.join(d, "kustomization.yaml")
    if not os.path.isfile(kf):
        raise RenderError(f"{d}: no kustomization.yaml")
    k = load_docs(kf)[0]
    unknown = set(k) - KUSTOMIZATION_FIELDS
    if unknown:
        raise RenderError(f"{kf}: fields the minimal renderer does not implement: "
                          f"{sorted(unknown)} (extend knative/tools/kustomize.py)")
    out = []
    for r in k.get("resources", []):
        p = os.path.normpath(os.path.join(d, r))
        if os.path.isdir(p):
            out += render(p, _stack + (d,))
        elif os.path.isfile(p):
            out += load_docs(p)
        else:
            raise RenderError(f"{kf}: resource {r} not found")
    for i, p in enumerate(k.get("patches", [])):
        apply_patch(out, p, d, f"{kf}: patches[{i}]")
    for res in out:
        md = res.setdefault("metadata", {})
        if "namespace" in k:
            if (group_of(res)[0], res.get("kind")) not in NAMESPACED_KINDS:
                raise RenderError(f"{kf}: namespace on a {res.get('kind')} is not implemented "
                                  "(extend knative/tools/kustomize.py)")
            md["namespace"] = k["namespace"]
        md["name"] += k.get("nameSuffix", "")
    for img in k.get("images", []):
        extra = set(img) - {"name", "newName", "newTag"}
        if extra:
            raise RenderError(f"{kf}: images: fields not implemented: {sorted(extra)}")
        set_image(out, img)
    return out


def group_of(res):
    av = res.get("apiVersion", "")
    return (av.rsplit("/", 1)[0] if "/" in av else ""), av.rsplit("/", 1)[-1]


def matches(res, target):
    unsupported = set(target) - {"group", "version", "kind", "name", "namespace"}
    if unsupported:
        raise RenderError(f"patch target fields not implemented: {sorted(unsupported)}")
    group, version = group_of(res)
    for key, have in (("group", group), ("version", version), ("kind", res.get("kind")),
                      ("name", res.get("metadata", {}).get("name")),
                      ("namespace", res.get("metadata", {}).get("namespace"))):
        want = target.get(key)
        if want is not None and not re.fullmatch(want, have or ""):
            return False
    return True


def apply_patch(resources, spec, d, where):
    if "path" in spec:
        docs = load_docs(os.path.join(d, spec["path"]))
    elif "patch" in spec:
        docs = docs_of(spec["patch"])
    else:
        raise RenderError(f"{where}: needs path or patch")
    if len(docs) == 1 and isinstance(docs[0], list):          # JSON 6902
        if "target" not in spec:
            raise RenderError(f"{where}: a JSON 6902 patch needs a target")
        hit = [r for r in resources if matches(r, spec["target"])]
        for r in hit:
            try:
                json6902(r, docs[0])
            except (KeyError, IndexError, ValueError) as e:
                raise RenderError(f"{where}: {e}")
    else:                                                       # strategic merge, by kind + name
        if "target" in spec:
            raise RenderError(f"{where}: a strategic-merge patch with a target is not implemented")
        hit = []
        for pdoc in docs:
            sel = [r for r in resources if r.get("kind") == pdoc.get("kind")
                   and group_of(r)[0] == group_of(pdoc)[0]
                   and r["metadata"]["name"] == pdoc["metadata"]["name"]]
            for r in sel:
                merged = smp(r, pdoc)
                r.clear()
                r.update(merged)
            hit += sel
    if not hit:
        raise RenderError(f"{where}: matches no resource")


def smp(dst, src):
    """Strategic merge of src into dst as kyaml does without a schema."""
    if isinstance(dst, dict) and isinstance(src, dict):
        if any(k.startswith("$") for k in src):
            raise RenderError("strategic-merge directives ($patch, ...) are not implemented")
        out = dict(dst)
        for k, v in src.items():
            if v is None:
                out.pop(k, None)
            elif k in out:
                out[k] = smp(out[k], v)
            else:
                out[k] = copy.deepcopy(v)
        return out
    both = dst + src if isinstance(dst, list) and isinstance(src, list) else []
    key = next((k for k in ASSOCIATIVE_KEYS
                if all(isinstance(x, dict) and k in x for x in both)), None)
    if both and key:
        out = copy.deepcopy(dst)
        for s in src:
            i = next((i for i, x in enumerate(out) if x[key] == s[key]), None)
            if i is None:
                out.append(copy.deepcopy(s))
            else:
                out[i] = smp(out[i], s)
        return out
    return copy.deepcopy(src)


def pointer(doc, path):
    """Split a JSON pointer; returns (parent container, last token)."""
    if not path.startswith("/"):
        raise ValueError(f"bad JSON pointer {path!r}")
    *toks, last = [t.replace("~1", "/").replace("~0", "~") for t in path[1:].split("/")]
    for t in toks:
        doc = doc[int(t)] if isinstance(doc, list) else doc[t]
    return doc, last


def jget(doc, path):
    parent, last = pointer(doc, path)
    return parent[int(last) if isinstance(parent, list) else last]


def json6902(doc, ops):
    for op in ops:
        kind, path = op["op"], op["path"]
        if kind == "replace":
            jget(doc, path)                                      # must exist
            parent, last = pointer(doc, path)
            parent[int(last) if isinstance(parent, list) else last] = copy.deepcopy(op["value"])
        elif kind == "add":                                      # RFC 6902: the parent must exist
            parent, last = pointer(doc, path)
            value = copy.deepcopy(op["value"])
            if isinstance(parent, list):
                i = len(parent) if last == "-" else int(last)
                if not 0 <= i <= len(parent):
                    raise IndexError(f"add at {path}: index out of range")
                parent.insert(i, value)
            else:
                parent[last] = value
        elif kind == "test":
            if jget(doc, path) != op["value"]:
                raise ValueError(f"test failed at {path}: {jget(doc, path)!r} != {op['value']!r}")
        else:
            raise ValueError(f"JSON patch op {kind!r} is not implemented (test, replace and add are)")


def split_image(ref):
    """'host:5000/a/b:tag@sha256:..' -> (name, tag, digest)."""
    name, _, digest = ref.partition("@")
    tag = None
    if ":" in name.rsplit("/", 1)[-1]:
        name, tag = name.rsplit(":", 1)
    return name, tag, digest or None


def set_image(node, img):
    """images: newName and newTag on every container whose image is img's name (with any tag)."""
    if isinstance(node, dict):
        for k, v in node.items():
            if k == "containers" and isinstance(v, list):
                for c in v:
                    name, tag, _ = split_image(c.get("image", ""))
                    if name == img["name"]:
                        tag = img.get("newTag", tag)
                        c["image"] = img.get("newName", name) + (f":{tag}" if tag else "")
            else:
                set_image(v, img)
    elif isinstance(node, list):
        for v in node:
            set_image(v, img)


def kubectl_kustomize(d):
    """Render with `kubectl kustomize`: (docs, None); ([], error) when it runs and refuses the
    kustomization (a disagreement with the minimal renderer); (None, why) when it cannot run."""
    exe = shutil.which("kubectl")
    if exe is None:
        return None, "kubectl not installed (the minimal renderer's output is all there is)"
    # `patches:` needs kustomize >= 3.1; kubectl embeds v2.0.3 up to 1.20 (Debian 12's
    # kubernetes-client) and reports its kustomize version only from 1.24 on.
    try:
        v = subprocess.run([exe, "version", "--client", "-o", "json"], capture_output=True,
                           text=True, timeout=30)
        kv = json.loads(v.stdout).get("kustomizeVersion", "") if v.returncode == 0 else ""
    except (subprocess.TimeoutExpired, ValueError):
        kv = ""
    m = re.match(r"v?(\d+)\.", kv)
    if not m or int(m.group(1)) < 4:
        return None, f"kubectl's built-in kustomize is {kv or 'too old to say'}; need >= v4"
    try:
        p = subprocess.run([exe, "kustomize", d], capture_output=True, text=True, timeout=60)
    except subprocess.TimeoutExpired:
        return None, "kubectl kustomize timed out"
    if p.returncode != 0:
        return [], f"kubectl kustomize failed: {p.stderr.strip()[:400]}"
    return docs_of(p.stdout), None


def canon(docs):
    return sorted(json.dumps(x, sort_keys=True) for x in docs)
