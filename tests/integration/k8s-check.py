#!/usr/bin/env python3
"""k8s-check.py - what an API server would refuse in a document, for the tests.

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


def main(argv):
    if len(argv) >= 3 and argv[0] == "schema":
        return cmd_schema(argv[1:])
    print(__doc__.strip(), file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
