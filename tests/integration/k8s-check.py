#!/usr/bin/env python3
"""k8s-check.py - what an API server would refuse in a document, for the tests.

  k8s-check.py manifests CONTRIB
      Check the Kubernetes manifests of CONTRIB/kubernetes (every
      document of every .yaml): the fields the API server requires of each
      kind, names it accepts, and the values that must agree with each
      other and with the rest of CONTRIB: the RuntimeClass handler with the
      containerd handler, its node selector with the label install.sh sets,
      the DaemonSet's paths with install.sh's and with the ConfigMap's
      config.json, the example pod's per-container annotations with its
      containers.  One line per problem, "FILE: KIND/NAME: PROBLEM"; exit 1
      on any.

  k8s-check.py schema SCHEMA FILE...
      Check each FILE (JSON or YAML, one document) against SCHEMA, an
      openAPIV3Schema subset (type, required, properties, items, $ref to
      "#/definitions/<name>", x-kubernetes-int-or-string, pattern).  Fields
      the schema does not name are errors too: a structural schema prunes
      them without a word.  One line per problem, "FILE: PATH: PROBLEM";
      exit 1 on any.

Only python3 and python3-yaml (Debian 12) are needed.
"""
import json
import os
import re
import sys

import yaml


def load(path):
    with open(path, encoding="utf-8") as f:
        text = f.read()
    if path.endswith(".json"):
        return [json.loads(text)]
    return [d for d in yaml.safe_load_all(text) if d is not None]


def resolve(schema, root):
    while "$ref" in schema:
        ref = schema["$ref"]
        if not ref.startswith("#/definitions/"):
            raise ValueError("unsupported $ref " + ref)
        schema = root["definitions"][ref[len("#/definitions/"):]]
    return schema


TYPES = {
    "object": dict,
    "array": list,
    "string": str,
    "boolean": bool,
}


def check(value, schema, root, path, problems):
    schema = resolve(schema, root)
    if schema.get("x-kubernetes-int-or-string"):
        if isinstance(value, bool) or not isinstance(value, (int, str)):
            problems.append(f"{path}: expected integer or string, got {type(value).__name__}")
            return
        if isinstance(value, str) and "pattern" in schema and not re.match(schema["pattern"], value):
            problems.append(f"{path}: '{value}' is not a quantity")
        return
    want = schema.get("type")
    if want == "integer":
        if isinstance(value, bool) or not isinstance(value, int):
            problems.append(f"{path}: expected integer, got {type(value).__name__}")
            return
    elif want is not None and not isinstance(value, TYPES[want]):
        problems.append(f"{path}: expected {want}, got {type(value).__name__}")
        return
    if isinstance(value, str) and "pattern" in schema and not re.match(schema["pattern"], value):
        problems.append(f"{path}: '{value}' does not match {schema['pattern']}")
    if isinstance(value, dict):
        props = schema.get("properties")
        for key in schema.get("required", []):
            if key not in value:
                problems.append(f"{path}: missing required field '{key}'")
        if props is None:
            return
        for key, member in value.items():
            if key not in props:
                problems.append(f"{path}.{key}: unknown field (the API server prunes it)")
            else:
                check(member, props[key], root, f"{path}.{key}", problems)
    elif isinstance(value, list) and "items" in schema:
        for i, item in enumerate(value):
            check(item, schema["items"], root, f"{path}[{i}]", problems)


def cmd_schema(args):
    with open(args[0], encoding="utf-8") as f:
        root = json.load(f)
    status = 0
    for path in args[1:]:
        for doc in load(path):
            problems = []
            check(doc, root, root, "$", problems)
            for p in problems:
                print(f"{path}: {p}")
                status = 1
    return status


DNS1123_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
DNS1123_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
# apiVersion of each kind the manifests use, and the fields it requires
# (beyond apiVersion, kind, metadata.name), as dotted paths.
KINDS = {
    "Namespace": ("v1", []),
    "ServiceAccount": ("v1", []),
    "ConfigMap": ("v1", []),
    "Pod": ("v1", ["spec.containers"]),
    "ClusterRole": ("rbac.authorization.k8s.io/v1", []),
    "ClusterRoleBinding": ("rbac.authorization.k8s.io/v1",
                           ["roleRef.apiGroup", "roleRef.kind", "roleRef.name"]),
    "RuntimeClass": ("node.k8s.io/v1", ["handler"]),
    "DaemonSet": ("apps/v1", ["spec.selector", "spec.template.spec.containers"]),
}
NAMESPACED = {"ServiceAccount", "ConfigMap", "Pod", "DaemonSet"}
CLASSES = {"critical", "standard", "batch"}


def get(obj, path):
    for part in path.split("."):
        if not isinstance(obj, dict) or part not in obj:
            return None
        obj = obj[part]
    return obj


class Manifests:
    def __init__(self, contrib):
        self.contrib = contrib
        self.problems = []
        self.docs = []  # (file, doc)
        kdir = os.path.join(contrib, "kubernetes")
        for name in sorted(os.listdir(kdir)):
            if name.endswith(".yaml"):
                for doc in load(os.path.join(kdir, name)):
                    self.docs.append((name, doc))

    def bad(self, f, doc, msg):
        self.problems.append(f"{f}: {doc.get('kind')}/{get(doc, 'metadata.name')}: {msg}")

    def find(self, kind):
        return [(f, d) for f, d in self.docs if d.get("kind") == kind]

    def one(self, kind):
        found = self.find(kind)
        if len(found) != 1:
            self.problems.append(f"kubernetes/: {len(found)} {kind} objects, want 1")
            return None, {}
        return found[0]

    def check_common(self):
        for f, d in self.docs:
            kind = d.get("kind")
            if kind not in KINDS:
                self.bad(f, d, f"kind '{kind}' is not one this check knows")
                continue
            version, required = KINDS[kind]
            if d.get("apiVersion") != version:
                self.bad(f, d, f"apiVersion '{d.get('apiVersion')}', want '{version}'")
            name = get(d, "metadata.name")
            if not isinstance(name, str) or not DNS1123_SUBDOMAIN.match(name):
                self.bad(f, d, f"metadata.name '{name}' is not a DNS-1123 subdomain")
            if (kind in NAMESPACED) != (get(d, "metadata.namespace") is not None) and kind != "Pod":
                self.bad(f, d, "metadata.namespace " + ("missing" if kind in NAMESPACED else "on a cluster-scoped kind"))
            for path in required:
                if get(d, path) in (None, [], {}):
                    self.bad(f, d, f"missing required field {path}")
            spec = get(d, "spec.template.spec") if kind == "DaemonSet" else d.get("spec")
            if kind in ("Pod", "DaemonSet") and isinstance(spec, dict):
                for c in spec.get("containers", []) + spec.get("initContainers", []):
                    for field in ("name", "image"):
                        if not c.get(field):
                            self.bad(f, d, f"a container without {field}")
                    if c.get("name") and not DNS1123_LABEL.match(c["name"]):
                        self.bad(f, d, f"container name '{c['name']}' is not a DNS-1123 label")

    def check_runtimeclass(self, handler, label):
        f, rc = self.one("RuntimeClass")
        if not rc:
            return None
        if rc.get("handler") != handler:
            self.bad(f, rc, f"handler '{rc.get('handler')}', but containerd's handler is '{handler}'")
        if not DNS1123_LABEL.match(str(rc.get("handler"))):
            self.bad(f, rc, "handler is not a DNS-1123 label")
        sel = get(rc, "scheduling.nodeSelector") or {}
        if sel != {label: "true"}:
            self.bad(f, rc, f"scheduling.nodeSelector {sel}, but install.sh labels nodes {label}=true")
        return get(rc, "metadata.name")

    def check_daemonset(self, install):
        f, ds = self.one("DaemonSet")
        if not ds:
            return
        ns = get(ds, "metadata.namespace")
        sel = get(ds, "spec.selector.matchLabels") or {}
        labels = get(ds, "spec.template.metadata.labels") or {}
        if not sel or any(labels.get(k) != v for k, v in sel.items()):
            self.bad(f, ds, "spec.selector does not match the template's labels")
        spec = get(ds, "spec.template.spec") or {}
        # the service account, its binding and role
        sa = spec.get("serviceAccountName")
        if not any(get(d, "metadata.name") == sa and get(d, "metadata.namespace") == ns
                   for _, d in self.find("ServiceAccount")):
            self.bad(f, ds, f"serviceAccountName '{sa}' is no ServiceAccount of namespace {ns}")
        if not any(get(d, "metadata.name") == ns for _, d in self.find("Namespace")):
            self.bad(f, ds, f"namespace {ns} is not created")
        fb, crb = self.one("ClusterRoleBinding")
        fr, cr = self.one("ClusterRole")
        if crb and cr:
            if get(crb, "roleRef.name") != get(cr, "metadata.name"):
                self.bad(fb, crb, "roleRef names another ClusterRole")
            if {"kind": "ServiceAccount", "name": sa, "namespace": ns} not in crb.get("subjects", []):
                self.bad(fb, crb, f"does not bind ServiceAccount {ns}/{sa}")
            grants = {(g, r, v) for rule in cr.get("rules", []) for g in rule.get("apiGroups", [])
                      for r in rule.get("resources", []) for v in rule.get("verbs", [])}
            for need in [("", "nodes", "get"), ("", "nodes", "patch"),
                         ("topology.node.k8s.io", "noderesourcetopologies", "get"),
                         ("topology.node.k8s.io", "noderesourcetopologies", "create"),
                         ("topology.node.k8s.io", "noderesourcetopologies", "patch")]:
                if need not in grants:
                    self.bad(fr, cr, f"does not grant {need[2]} on {need[1]} (kubectl label / apply)")
        volumes = {v["name"]: v for v in spec.get("volumes", [])}
        inits = spec.get("initContainers", [])
        mains = spec.get("containers", [])
        for c in inits + mains:
            for m in c.get("volumeMounts", []):
                if m["name"] not in volumes:
                    self.bad(f, ds, f"container {c['name']} mounts volume '{m['name']}', which is not defined")
            env = {e["name"]: e for e in c.get("env", [])}
            if get(env.get("NODE_NAME", {}), "valueFrom.fieldRef.fieldPath") != "spec.nodeName":
                self.bad(f, ds, f"container {c['name']}: NODE_NAME is not spec.nodeName")
            host = env.get("HOST_ROOT", {}).get("value", install["HOST_ROOT"])
            mnt = [m for m in c.get("volumeMounts", []) if m["mountPath"] == host]
            if not mnt or get(volumes.get(mnt[0]["name"], {}), "hostPath.path") != "/":
                self.bad(f, ds, f"container {c['name']}: HOST_ROOT {host} is not the host's / ")
            if not get(c, "securityContext.privileged"):
                self.bad(f, ds, f"container {c['name']} is not privileged")
        script = install["script"]
        if [c.get("command") for c in inits] != [[script, "install"]]:
            self.bad(f, ds, f"the init container does not run '{script} install'")
        if [c.get("command") for c in mains] != [[script, "nrt-loop"]]:
            self.bad(f, ds, f"the container does not run '{script} nrt-loop'")
        if [get(c, "lifecycle.preStop.exec.command") for c in mains] != [[script, "uninstall"]]:
            self.bad(f, ds, f"the container's preStop is not '{script} uninstall'")
        if not spec.get("hostPID"):
            self.bad(f, ds, "hostPID is off: install.sh cannot nsenter PID 1 to restart containerd")
        # the ConfigMap, where install.sh reads it
        fc, cm = self.one("ConfigMap")
        if cm:
            if get(cm, "metadata.namespace") != ns:
                self.bad(fc, cm, f"namespace is not the DaemonSet's ({ns})")
            cfgvol = [n for n, v in volumes.items() if get(v, "configMap.name") == get(cm, "metadata.name")]
            where = os.path.dirname(install["CONFIG_SRC"])
            if not cfgvol or not any(m["name"] in cfgvol and m["mountPath"] == where
                                     for c in inits for m in c.get("volumeMounts", [])):
                self.bad(f, ds, f"the ConfigMap is not mounted at {where} of the init container (install.sh's CONFIG_SRC)")
            try:
                conf = json.loads((cm.get("data") or {}).get("config.json", ""))
            except ValueError as e:
                self.bad(fc, cm, f"config.json does not parse: {e}")
                conf = {}
            # what toposhimctl nrt reads must be at the host's paths
            nrt = mains[0] if mains else {}
            mounts = {m["mountPath"]: volumes.get(m["name"], {}) for m in nrt.get("volumeMounts", [])}
            paths = [conf.get("state_dir", "/run/toposhim"), "/etc/toposhim"]
            paths += (conf.get("cdi") or {}).get("spec_dirs", ["/etc/cdi", "/var/run/cdi"])
            for p in paths:
                if get(mounts.get(p, {}), "hostPath.path") != p:
                    self.bad(f, ds, f"container {nrt.get('name')}: the host's {p} is not mounted at {p}")

    def check_pod(self, runtimeclass):
        for f, pod in self.find("Pod"):
            if get(pod, "spec.runtimeClassName") != runtimeclass:
                self.bad(f, pod, f"runtimeClassName is not '{runtimeclass}'")
            names = {c["name"] for c in get(pod, "spec.containers") or []}
            for key, value in (get(pod, "metadata.annotations") or {}).items():
                if not key.startswith(("toposhim.io/", "cdi.k8s.io/")):
                    continue
                prefix, rest = key.split("/", 1)
                word, dot, container = rest.partition(".")
                if dot and container not in names:
                    self.bad(f, pod, f"annotation {key} names no container of the pod")
                if prefix == "toposhim.io" and word == "class" and value not in CLASSES:
                    self.bad(f, pod, f"annotation {key}: unknown class '{value}'")
                if prefix == "cdi.k8s.io" and not re.match(r"^[a-z0-9.-]+/[a-zA-Z0-9._-]+=[a-zA-Z0-9:._-]+$", value):
                    self.bad(f, pod, f"annotation {key}: '{value}' is not a qualified device name")


def check_image(m, contrib, install):
    """contrib/Containerfile puts what install.sh reads where it reads it,
    under the tag the DaemonSet runs."""
    path = os.path.join(contrib, "Containerfile")
    with open(path, encoding="utf-8") as f:
        text = f.read()
    dests = set(re.findall(r"^COPY .* (\S+)$", text, re.M))
    src = install["SRC"]
    for want in (f"{src}/bin/", f"{src}/libexec/", f"{src}/lib/toposhim/", f"{src}/containerd/",
                 install["script"]):
        if want not in dests:
            m.problems.append(f"Containerfile: nothing is copied to {want} (install.sh's SRC layout)")
    tags = set(re.findall(r"build -f contrib/Containerfile -t (\S+) \.", text))
    for f, ds in m.find("DaemonSet"):
        spec = get(ds, "spec.template.spec") or {}
        for c in spec.get("initContainers", []) + spec.get("containers", []):
            if c.get("image") not in tags:
                m.bad(f, ds, f"container {c.get('name')}: image {c.get('image')} is not the tag "
                      f"contrib/Containerfile documents ({', '.join(sorted(tags))})")


def install_defaults(contrib):
    """The defaults of install.sh (NAME=${NAME:-value} lines) and its LABEL."""
    out = {"script": "/opt/toposhim/install.sh"}
    with open(os.path.join(contrib, "kubernetes", "install.sh"), encoding="utf-8") as f:
        for line in f:
            m = re.match(r"^([A-Z_]+)=\$\{[A-Z_]+:-(.*)\}$", line.strip())
            if m:
                out[m.group(1)] = m.group(2)
            m = re.match(r"^LABEL=(\S+)$", line.strip())
            if m:
                out["LABEL"] = m.group(1)
    return out


def containerd_handler(contrib):
    import tomllib
    with open(os.path.join(contrib, "containerd", "config-v2.toml"), "rb") as f:
        conf = tomllib.load(f)
    runtimes = conf["plugins"]["io.containerd.grpc.v1.cri"]["containerd"]["runtimes"]
    return [name for name in runtimes if name != "runc"][0]


def cmd_manifests(args):
    contrib = args[0]
    m = Manifests(contrib)
    install = install_defaults(contrib)
    m.check_common()
    rc = m.check_runtimeclass(containerd_handler(contrib), install["LABEL"])
    m.check_daemonset(install)
    m.check_pod(rc)
    check_image(m, contrib, install)
    for p in m.problems:
        print(p)
    return 1 if m.problems else 0


def main(argv):
    if len(argv) >= 3 and argv[0] == "schema":
        return cmd_schema(argv[1:])
    if len(argv) == 2 and argv[0] == "manifests":
        return cmd_manifests(argv[1:])
    print(__doc__.strip(), file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
