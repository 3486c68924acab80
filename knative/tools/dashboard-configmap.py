#!/usr/bin/python3
"""knative/tools/dashboard-configmap.py - writes knative/monitoring/dashboard-configmap.yaml, the
ConfigMap that carries knative/grafana/primed-dashboard.json verbatim.

One source: edit the JSON and run this; tests/knative/validate fails when the ConfigMap's dashboard
differs from the JSON. Usage: knative/tools/dashboard-configmap.py
"""
import os
import sys

KN = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DASHBOARD = os.path.join(KN, "grafana", "primed-dashboard.json")
DASHBOARD_CM = os.path.join(KN, "monitoring", "dashboard-configmap.yaml")


def dashboard_configmap_text(dash_text):
    body = "".join("    " + line + "\n" if line else "\n" for line in dash_text.splitlines())
    return ("# Generated from knative/grafana/primed-dashboard.json by\n"
            "#   knative/tools/dashboard-configmap.py\n"
            "# Edit the JSON, not this file: the validation fails when they differ.\n"
            "# Grafana's dashboard sidecar (kube-prometheus-stack) loads ConfigMaps with the label\n"
            "# grafana_dashboard: \"1\" from the namespaces its searchNamespace setting names.\n"
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: primed-dashboard\n  labels:\n"
            "    app.kubernetes.io/name: primed\n    grafana_dashboard: \"1\"\n"
            "data:\n  primed-dashboard.json: |\n" + body)


def main(argv):
    if len(argv) > 1:
        print(__doc__.strip(), file=sys.stderr if argv[1] not in ("-h", "--help") else sys.stdout)
        return 0 if argv[1] in ("-h", "--help") else 2
    with open(DASHBOARD) as f:
        text = dashboard_configmap_text(f.read())
    with open(DASHBOARD_CM, "w") as f:
        f.write(text)
    print(f"wrote {DASHBOARD_CM}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
