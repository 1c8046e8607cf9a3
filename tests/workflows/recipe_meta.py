"""recipes/ksieve/meta.yaml as conda-build reads it on Linux: the jinja rendered (load_file_regex over the
source tree, compiler() and pin_subpackage() as placeholders), the selectors applied, the YAML parsed.
"""
import os
import re

import jinja2
import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
RECIPE = os.path.join(ROOT, "recipes", "ksieve")
SELECTOR = re.compile(r"^(.*?)\s*#\s*\[([^\]]+)\]\s*$")
PLATFORM = {"linux": True, "linux64": True, "unix": True, "osx": False, "win": False, "x86_64": True}


def apply_selectors(text):
    """Lines whose `# [expr]` selector is false on Linux x86-64 dropped, the others kept without it."""
    kept = []
    for line in text.splitlines():
        m = SELECTOR.match(line)
        if m and not line.lstrip().startswith("#"):
            if not eval(m.group(2), {"__builtins__": {}}, dict(PLATFORM)):  # selectors are Python expressions
                continue
            line = m.group(1)
        kept.append(line)
    return "\n".join(kept) + "\n"


def load_file_regex(source_dir):
    def load(load_file, regex_pattern, from_recipe_dir=False):
        path = os.path.join(RECIPE if from_recipe_dir else source_dir, load_file)
        return re.search(regex_pattern, open(path).read()) if os.path.isfile(path) else None
    return load


def render(source_dir=ROOT):
    """The recipe as a dict, rendered against the source tree at source_dir."""
    text = open(os.path.join(RECIPE, "meta.yaml")).read()
    env = jinja2.Environment(undefined=jinja2.StrictUndefined)
    template = env.from_string(apply_selectors(text))
    rendered = template.render(load_file_regex=load_file_regex(source_dir),
                               compiler=lambda language: f"{language}-compiler",
                               pin_subpackage=lambda name, max_pin=None, exact=False: name)
    return yaml.safe_load(rendered)
