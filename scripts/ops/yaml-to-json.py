#!/usr/bin/python3
"""Prints the YAML documents of FILE as one JSON array (for OperationsTests, which has no YAML parser).

usage: scripts/ops/yaml-to-json.py FILE
Exit status 1 with the parser's message on standard error when FILE is not valid YAML.
"""
import json
import sys

import yaml

try:
    with open(sys.argv[1]) as file:
        documents = [document for document in yaml.safe_load_all(file)]
except yaml.YAMLError as error:
    print(f"{sys.argv[1]}: {error}", file=sys.stderr)
    sys.exit(1)
json.dump(documents, sys.stdout, default=str)
