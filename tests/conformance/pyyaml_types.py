#!/usr/bin/env python3
"""Prints PyYAML's reading of each line of FILE as a plain scalar ("type value"),
in the format of `yaml_suite --pyyaml-types`, so that the two can be compared.
    pyyaml_types.py FILE"""
import datetime
import sys

import yaml

for line in open(sys.argv[1], encoding="utf-8").read().splitlines():
    try:
        v = yaml.safe_load("k: " + line)["k"]
    except yaml.YAMLError:
        v = line  # not a scalar PyYAML reads (e.g. "="): lib/yaml treats it as text
    if v is None:
        print("null")
    elif isinstance(v, bool):
        print("bool " + ("true" if v else "false"))
    elif isinstance(v, int):
        print("int %.15g" % v)
    elif isinstance(v, float):
        print("float %.15g" % v)
    elif isinstance(v, (datetime.date, datetime.datetime)):
        print("timestamp")
    else:
        print("str " + str(v))
