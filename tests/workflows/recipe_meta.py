"""recipes/ksieve/meta.yaml (or the recipe scripts/release.sh writes from it) as conda-build reads it on Linux:
the jinja rendered (load_file_regex over the source tree, compiler(), stdlib() and pin_subpackage() as
placeholders), the selectors applied, the YAML parsed; and the checks of bioconda's linter that apply to it.
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


def render(source_dir=ROOT, recipe_dir=RECIPE):
    """The recipe of recipe_dir as a dict, rendered against the source tree at source_dir."""
    text = open(os.path.join(recipe_dir, "meta.yaml")).read()
    env = jinja2.Environment(undefined=jinja2.StrictUndefined)
    template = env.from_string(apply_selectors(text))
    rendered = template.render(load_file_regex=load_file_regex(source_dir),
                               compiler=lambda language: f"{language}-compiler",
                               stdlib=lambda language: f"{language}-stdlib",
                               pin_subpackage=lambda name, max_pin=None, exact=False: name)
    return yaml.safe_load(rendered)


def lint(recipe_dir, release=True):
    """What bioconda's linter says of the recipe of recipe_dir (the rules that apply to ksieve's): a list of
    (rule, message), empty where it passes. release: the recipe to submit (a real sha256); otherwise the
    template, whose sha256 is zeros."""
    raw = open(os.path.join(recipe_dir, "meta.yaml")).read()
    recipe = render(ROOT, recipe_dir)
    source = recipe.get("source") or {}
    build = recipe.get("build") or {}
    about = recipe.get("about") or {}
    reqs = (recipe.get("requirements") or {}).get("build") or []
    extra = recipe.get("extra") or {}
    version = str((recipe.get("package") or {}).get("version"))
    sha = str(source.get("sha256", ""))
    problems = [
        ("uses_vcs_url", "the source is a git, hg or svn url") if any(k in source for k in ("git_url", "hg_url", "svn_url")) else None,
        ("uses_path_url", "the source is a local path") if "path" in source else None,
        ("missing_hash", "the url has no sha256") if "url" in source and not re.fullmatch(r"[0-9a-f]{64}", sha) else None,
        ("missing_hash", "the sha256 is the template's zeros") if release and sha == "0" * 64 else None,
        ("missing_source", "no url source") if "url" not in source else None,
        ("version_not_literal", "the version is not a literal") if not re.search(r'^\{% set version = "[0-9.]+" %\}$', raw, re.M) else None,
        ("url_not_version", "the url does not name the version") if version not in str(source.get("url", "")) else None,
        ("missing_build_number", "no build number") if "number" not in build else None,
        ("should_use_compilers", "no compiler('cxx')") if "{{ compiler('cxx') }}" not in raw else None,
        ("compiler_needs_stdlib_c", "compiler('cxx') without stdlib('c')") if "{{ stdlib('c') }}" not in raw or "c-stdlib" not in reqs else None,
        ("missing_run_exports", "no run_exports") if not build.get("run_exports") else None,
        ("missing_home", "no about: home") if not about.get("home") else None,
        ("missing_license", "no about: license") if not about.get("license") else None,
        ("missing_license_file", "no about: license_file") if not about.get("license_file") else None,
        ("missing_summary", "no about: summary") if not about.get("summary") else None,
        ("missing_tests", "no test: commands") if not (recipe.get("test") or {}).get("commands") else None,
        ("additional_platforms", "no additional-platforms linux-aarch64 and osx-arm64")
        if not {"linux-aarch64", "osx-arm64"} <= set(extra.get("additional-platforms") or []) else None,
        ("missing_maintainers", "no recipe-maintainers") if not extra.get("recipe-maintainers") else None,
    ]
    return [p for p in problems if p]
