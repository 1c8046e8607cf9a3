"""Checks of examples/nextflow against the layout nf-core's linter asks of modules and subworkflows, and the
ksieve command lines of the modules as the pipeline renders them (for test_workflows.py, which compares them
with the Snakemake rules'). Nextflow is not needed: the .nf, .config and meta.yml files are read as text.

A module (modules/ksieve/<command>/, modules/nf-core/multiqc/) has, in nf-core's order, tag, label, conda,
container, input, output, when, script and stub; a conda environment.yml beside it with pinned packages; the
container chosen on workflow.containerEngine (singularity/apptainer or docker) with the same tool version in
both images; its version emitted as `tuple val("${task.process}"), val(TOOL), eval(CMD), emit: versions_TOOL,
topic: versions` (MultiQC: emit versions, off the topic that feeds it) and no versions.yml; a *.log output that
the script fills with ksieve's standard error (tee) and the stub creates; ext.args and ext.prefix; a
meta.yml whose inputs are the process's, whose outputs are a map keyed by the emit names in their order, with
EDAM ontologies for each file; tests/main.nf.test (nf-test, a stub test among them) and tests/nextflow.config.
The subworkflow's take and emit are its meta.yml's input and output, its components the modules it includes.
"""
import os
import re

import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
NF = os.path.join(ROOT, "examples", "nextflow")
SECTIONS = ["tag", "label", "conda", "container", "input:", "output:", "when:", "script:", "stub:"]
CONTAINER = re.compile(
    r"""container "\$\{\s*workflow\.containerEngine in \['singularity', 'apptainer'\] && """
    r"""!task\.ext\.singularity_pull_docker_container \?\s*'([^']+)'\s*:\s*'([^']+)'\s*\}\"""")
VERSIONS = re.compile(r"""tuple val\("\$\{task\.process\}"\), val\('(\w+)'\), eval\('([^']+)'\), emit: (\w+)(, topic: (\w+))?""")
EDAM = re.compile(r"^http://edamontology\.org/(format|data|operation|topic)_\d{4}$")


def section(text, start, end):
    """The text of a process between two section headers ("" where the first is missing)."""
    if start not in text:
        return ""
    after = text.split(start, 1)[1]
    return after.split(end, 1)[0] if end else after


def emits_of(outputs):
    """{emit name: (the path pattern or None, optional)} of an output: block, in order."""
    emits = {}
    for m in re.finditer(r"^\s*(.*?)\s*,\s*emit: (\w+)(.*)$", outputs, re.M):
        pattern = re.search(r'path\s*\(?\s*"([^"]+)"', m.group(1))
        emits[m.group(2)] = (pattern.group(1) if pattern else None, "optional: true" in m.group(3))
    return emits


def input_names(inputs):
    """The names a process's input: block declares, in order."""
    return re.findall(r"\b(?:val|path)\s*\(?(\w+)", inputs)


def file_entries(node):
    """Every {name: {"type": "file", ...}} entry of a meta.yml input or output tree."""
    if isinstance(node, list):
        for item in node:
            yield from file_entries(item)
    elif isinstance(node, dict):
        for name, spec in node.items():
            if isinstance(spec, dict) and spec.get("type") == "file":
                yield name, spec
            elif isinstance(spec, (list, dict)):
                yield from file_entries(spec)


def check_meta_yml(check, name, path, inputs, emits, versions):
    meta = yaml.safe_load(open(path))
    for key in ("name", "description", "keywords", "tools", "input", "output", "authors", "maintainers"):
        check(key in meta and meta[key], f"{name}: meta.yml has {key}")
    tools = meta.get("tools") or [{}]
    for tool in tools:
        for tool_name, spec in tool.items():
            check(isinstance(spec, dict) and isinstance(spec.get("identifier"), str),
                  f"{name}: meta.yml's tool {tool_name} has an identifier (biotools:NAME, or \"\" where unregistered)")
    declared = [list(e)[0] for group in meta.get("input") or []
                for e in (group if isinstance(group, list) else [group])]
    check(declared == inputs, f"{name}: meta.yml's inputs {declared} are the module's {inputs}")
    output = meta.get("output")
    check(isinstance(output, dict) and list(output) == list(emits),
          f"{name}: meta.yml's outputs are a map keyed by the emits {list(emits)} "
          f"({list(output) if isinstance(output, dict) else type(output).__name__})")
    for entry, spec in list(file_entries(meta.get("input"))) + list(file_entries(output)):
        ontologies = spec.get("ontologies")
        check(isinstance(ontologies, list) and ontologies and
              all(EDAM.match(str(o.get("edam", ""))) for o in ontologies),
              f"{name}: meta.yml's {entry} has EDAM ontologies")
    for emit, tool, command, topic in versions:
        entry = (output or {}).get(emit) if isinstance(output, dict) else None
        keys = [list(e)[0] for e in entry[0]] if entry and isinstance(entry[0], list) else []
        check(keys == ["${task.process}", tool, command], f"{name}: meta.yml's {emit} is (process, {tool}, eval)")
        if topic:
            topics = meta.get("topics") or {}
            check(topic in topics and [list(e)[0] for e in topics[topic][0]] == keys,
                  f"{name}: meta.yml lists the {topic} topic")


def check_environment(check, name, path, versions_of):
    env = yaml.safe_load(open(path)) if os.path.exists(path) else None
    if not check(env is not None, f"{name}: environment.yml beside it"):
        return
    check(env.get("channels") == ["conda-forge", "bioconda"], f"{name}: channels conda-forge, bioconda")
    for dep in env.get("dependencies") or []:
        m = re.fullmatch(r"(?:[\w-]+::)?([\w.-]+)=([\w.]+)", str(dep))
        if check(m is not None, f"{name}: {dep} is pinned (channel::package=version)"):
            versions_of.setdefault(m.group(1), set()).add(m.group(2))


def check_container(check, name, text, versions_of):
    m = CONTAINER.search(text)
    if not check(m is not None, f"{name}: the container is chosen on workflow.containerEngine"):
        return
    tags = [re.search(r"[:/]([\w-]+):([\w.]+)(?:--|$)", image) for image in m.groups()]
    if not all(tags):  # images addressed by digest (the singularity blobs of Seqera's containers)
        tags = [t for t in tags if t]
    for t in tags:
        versions_of.setdefault(t.group(1), set()).add(t.group(2))


def check_module(check, path):
    """The checks of one module; returns (process name, {emit: (pattern, optional)}, {tool: {versions}})."""
    text = open(path).read()
    name = os.path.relpath(path, NF)
    directory = os.path.dirname(path)
    is_multiqc = os.path.basename(directory) == "multiqc"
    process = re.search(r"^process (\w+) \{", text, re.M)
    check(process is not None, f"{name}: a process")
    sections = re.findall(r"^    (tag|label|conda|container|input:|output:|when:|script:|stub:)", text, re.M)
    check(sections == SECTIONS, f"{name}: sections {SECTIONS} in order ({sections})")
    check("versions.yml" not in text, f"{name}: no versions.yml (the version is an eval output)")
    check('conda "${moduleDir}/environment.yml"' in text, f"{name}: conda from environment.yml")
    inputs = section(text, "input:", "output:")
    outputs = section(text, "output:", "when:")
    script = section(text, "script:", "stub:")
    stub = section(text, "stub:", None)
    emits = emits_of(outputs)
    versions = [(m.group(3), m.group(1), m.group(2), m.group(5)) for m in VERSIONS.finditer(outputs)]
    tools_of = {}
    check_environment(check, name, os.path.join(directory, "environment.yml"), tools_of)
    check_container(check, name, text, tools_of)
    check(len(versions) == 1, f"{name}: one versions output: tuple val(task.process), val(tool), eval(...)")
    for emit, tool, _, topic in versions:
        if is_multiqc:
            check(emit == "versions" and topic is None,
                  f"{name}: emit versions, not on the versions topic (that the pipeline feeds it)")
        else:
            check(emit == f"versions_{tool}" and topic == "versions", f"{name}: emit versions_{tool}, topic: versions")
    check("task.ext.when == null || task.ext.when" in section(text, "when:", "script:"), f"{name}: when: task.ext.when")
    check("task.ext.args" in script, f"{name}: honours ext.args")
    check("task.ext.prefix" in script, f"{name}: honours ext.prefix")
    check(re.search(r"^\s*tuple val\(meta\), path\(", inputs, re.M) is not None, f"{name}: input tuple val(meta), path(...)")
    if not is_multiqc:
        check(emits.get("log", (None,))[0] == "${prefix}.log", f"{name}: a log output (${{prefix}}.log)")
        check("2> >(tee ${prefix}.log >&2)" in script, f"{name}: the script keeps ksieve's standard error in the log")
        check("touch ${prefix}.log" in stub and "task.ext.prefix" in stub, f"{name}: the stub makes the log, with ext.prefix")
    for emit, (pattern, _) in emits.items():
        if pattern and emit != "multiqc":
            check(not re.fullmatch(pattern.replace("${prefix}", "S").replace(".", r"\.").replace("*", ".*"),
                                   "S_mqc.json"), f"{name}: {emit} ({pattern}) does not take *_mqc.json")
    check_meta_yml(check, name, os.path.join(directory, "meta.yml"), input_names(inputs), emits, versions)
    check_module_tests(check, name, directory, process.group(1) if process else "")
    return (process.group(1) if process else None), emits, tools_of


def check_module_tests(check, name, directory, process):
    test = os.path.join(directory, "tests", "main.nf.test")
    config = os.path.join(directory, "tests", "nextflow.config")
    if check(os.path.exists(test), f"{name}: tests/main.nf.test"):
        text = open(test).read()
        for needed in ("nextflow_process {", 'script "../main.nf"', f'process "{process}"', 'config "./nextflow.config"',
                       'options "-stub"', "assert process.success", ".match()"):
            check(needed in text, f"{name}: tests/main.nf.test has {needed}")
    if check(os.path.exists(config), f"{name}: tests/nextflow.config"):
        check(f"withName: '{process}'" in open(config).read(), f"{name}: tests/nextflow.config sets {process}'s ext")


def workflow_blocks(text):
    """The take:, main: and emit: blocks of a workflow definition."""
    return (section(text, "take:", "main:"), section(text, "main:", "emit:"), section(text, "emit:", None))


def check_subworkflow(check, directory):
    name = os.path.relpath(directory, NF)
    text = open(os.path.join(directory, "main.nf")).read()
    wf = re.search(r"^workflow (\w+) \{", text, re.M)
    check(wf is not None and wf.group(1) == os.path.basename(directory).upper(), f"{name}: workflow {os.path.basename(directory).upper()}")
    take, _, emit = workflow_blocks(text)
    takes = re.findall(r"^\s*(\w+)\s*(?://.*)?$", take, re.M)
    emits = re.findall(r"^\s*(\w+)\s*=", emit, re.M)
    meta = yaml.safe_load(open(os.path.join(directory, "meta.yml")))
    check([list(i)[0] for i in meta.get("input") or []] == takes, f"{name}: meta.yml's inputs are the take {takes}")
    check([list(o)[0] for o in meta.get("output") or []] == emits, f"{name}: meta.yml's outputs are the emits {emits}")
    included = sorted(set(re.findall(r"from '\.\./\.\./\.\./modules/(ksieve/\w+)/main'", text)))
    check(sorted(meta.get("components") or []) == included, f"{name}: meta.yml's components are the modules {included}")
    check("multiqc_files" in emits, f"{name}: emits the files for MultiQC")
    test = os.path.join(directory, "tests", "main.nf.test")
    if check(os.path.exists(test), f"{name}: tests/main.nf.test"):
        body = open(test).read()
        for needed in ("nextflow_workflow {", 'script "../main.nf"', f'workflow "{wf.group(1) if wf else ""}"',
                       'options "-stub"', "assert workflow.success", ".match()"):
            check(needed in body, f"{name}: tests/main.nf.test has {needed}")
    return text


def config_blocks(config, kind):
    """{selector: body} of the withLabel or withName blocks of a config file."""
    return {m.group(1): m.group(2) for m in re.finditer(kind + r": '?([\w|]+)'? \{(.*?)\n    \}", config, re.S)}


def check_pipeline(check, version):
    """The pipeline (main.nf, nextflow.config, conf/); returns (modules.config text, base.config labels)."""
    main = open(os.path.join(NF, "main.nf")).read()
    config = open(os.path.join(NF, "nextflow.config")).read()
    base = open(os.path.join(NF, "conf", "base.config")).read()
    modules = open(os.path.join(NF, "conf", "modules.config")).read()
    test = open(os.path.join(NF, "conf", "test.config")).read()
    check("include { FASTQ_HOST_DEPLETE_KSIEVE }" in main and "include { MULTIQC" in main and
          "from './modules/nf-core/multiqc/main'" in main, "main.nf includes the subworkflow and nf-core's MultiQC module")
    check(re.search(r"channel\.topic\('versions'\)(.|\n)*MULTIQC\(", main) is not None,
          "main.nf gives MultiQC the versions topic")
    manifest = section(config, "manifest {", "\n}")
    for key in ("name", "description", "mainScript", "nextflowVersion", "version"):
        check(re.search(rf"^\s*{key}\s*=", manifest, re.M) is not None, f"nextflow.config: manifest.{key}")
    nf_version = re.search(r"nextflowVersion\s*=\s*'!>=(\d+)\.(\d+)", manifest)
    check(nf_version is not None and (int(nf_version.group(1)), int(nf_version.group(2))) >= (25, 4),
          "nextflow.config: nextflowVersion '!>=25.04' or later (topic channels)")
    check(re.search(rf"^\s*version\s*=\s*'{re.escape(version)}'", manifest, re.M) is not None,
          f"nextflow.config: manifest.version is ksieve's {version}")
    for profile in ("docker", "singularity", "apptainer", "conda", "test"):
        check(re.search(rf"^    {profile} \{{", config, re.M) is not None, f"nextflow.config: profile {profile}")
    check("includeConfig 'conf/test.config'" in config, "the test profile is conf/test.config")
    for text, where in ((base, "conf/base.config"), (test, "conf/test.config")):
        check(re.search(r"resourceLimits\s*=\s*\[\s*cpus:[^\]]*memory:[^\]]*time:", text) is not None,
              f"{where}: resourceLimits (cpus, memory, time)")
    labels = config_blocks(base, "withLabel")
    for label in ("process_single", "process_low", "process_medium", "process_high"):
        check(label in labels, f"conf/base.config: label {label}")
    for label, body in labels.items():
        for key in ("cpus", "memory", "time"):
            check(re.search(rf"^\s*{key}\s*=", body, re.M) is not None, f"label {label} sets {key}")
    for d, _, files in os.walk(NF):
        for f in files:
            if f.endswith((".nf", ".config")):
                check(re.search(r"dsl\s*=\s*2", open(os.path.join(d, f)).read()) is None, f"{f}: no obsolete dsl = 2")
    return modules, labels


def check_nextflow(check, version):
    """Every check of this file; returns what nextflow_shapes needs and {tool: {versions named}}."""
    modules = {}
    tools_of = {}
    for command in sorted(os.listdir(os.path.join(NF, "modules", "ksieve"))):
        process, emits, tools = check_module(check, os.path.join(NF, "modules", "ksieve", command, "main.nf"))
        modules[command] = emits
        for tool, versions in tools.items():
            tools_of.setdefault(tool, set()).update(versions)
    _, _, tools = check_module(check, os.path.join(NF, "modules", "nf-core", "multiqc", "main.nf"))
    for tool, versions in tools.items():
        tools_of.setdefault(tool, set()).update(versions)
    check({"build", "classify", "dedup", "merge"} <= set(modules), "build, classify, dedup and merge modules")
    check(modules.get("classify", {}).get("known", (None, False))[1], "classify: known reads optional")
    subworkflow = check_subworkflow(check, os.path.join(NF, "subworkflows", "ksieve", "fastq_host_deplete_ksieve"))
    modules_config, labels = check_pipeline(check, version)
    aliases = re.findall(r"include \{ (\w+)(?: as (\w+))?\s*\} from '\.\./\.\./\.\./modules/ksieve/(\w+)/main'", subworkflow)
    processes = {alias or name for name, alias, _ in aliases} | {"MULTIQC"}
    for selector in config_blocks(modules_config, "withName"):
        for name in selector.split("|"):
            check(name in processes, f"conf/modules.config: withName '{name}' is a process of the pipeline")
    return (modules_config, labels, aliases), tools_of


# ------------------------------------------------------------------------------------- command lines


def split_operand(s):
    """The first operand of a Groovy expression (a string literal or a parenthesized one) and the rest."""
    s = s.lstrip()
    if s[0] in "\"'":
        end = s.index(s[0], 1)
        return s[: end + 1], s[end + 1:]
    if s[0] == "(":
        depth = 0
        for i, c in enumerate(s):
            depth += (c == "(") - (c == ")")
            if depth == 0:
                return s[: i + 1], s[i + 1:]
    raise ValueError("operand: " + s)


def groovy(expr, env):
    """The value of the expressions the module scripts use: literals, ternaries, `task.ext.X ?: default`."""
    expr = expr.strip()
    m = re.fullmatch(r"task\.ext\.(\w+) \?: (.*)", expr)
    if m:
        return env["ext." + m.group(1)] if env.get("ext." + m.group(1)) else groovy(m.group(2), env)
    m = re.match(r"(!?)([\w.]+) \? ", expr)
    if m:
        a, rest = split_operand(expr[m.end():])
        b, rest = split_operand(rest.lstrip()[1:])
        if rest.strip():
            raise ValueError("trailing: " + rest)
        cond = bool(env[m.group(2)]) != bool(m.group(1))
        return groovy(a if cond else b, env)
    if expr[0] == "(":
        return groovy(expr[1:-1], env)
    if expr[0] in "\"'":
        return re.sub(r"\$\{((?:[^}(]|\([^)]*\))+)\}", lambda v: str(interpolated(v.group(1), env)), expr[1:-1])
    raise ValueError("expression: " + expr)


def interpolated(expr, env):
    """The value of ${expr} in a string: a name of env ("PATH" where unknown), or the megabytes of the task's
    memory times a factor, (task.memory.toMega() * F).intValue()."""
    m = re.fullmatch(r"\(task\.memory\.toMega\(\) \* ([\d.]+)\)\.intValue\(\)", expr)
    if m:
        return int(env["task.memory.mega"] * float(m.group(1)))
    return env.get(expr, "PATH")


def render(script, env):
    """The ksieve command line of a module's script: block (its continuation lines joined, its standard
    error redirection dropped) with the defs evaluated in env."""
    env = dict(env)
    for name, expr in re.findall(r"^\s*(?:def )?(\w+) = (.*)$", script, re.M):
        env[name] = groovy(expr, env)
    body = script.split('"""')[1].replace("\\\\\n", " ")
    line = next(l.strip() for l in body.splitlines() if l.strip().startswith("ksieve "))
    return groovy('"' + line.split(" 2>")[0] + '"', env)


def nextflow_commands(prepared, samples_filter="merge"):
    """The ksieve command lines the pipeline's modules run, for single-end and paired-end samples, with the
    ext.args of conf/modules.config; the sample filters merged or intersected (val_samples_filter)."""
    modules_config, labels, aliases = prepared
    names = config_blocks(modules_config, "withName")
    commands = set()
    skipped = {"merge": "KSIEVE_INTERSECT_SAMPLES", "intersect": "KSIEVE_MERGE_SAMPLES"}[samples_filter]
    for name, alias, module in aliases:
        alias = alias or name
        if alias == skipped:
            continue
        text = open(os.path.join(NF, "modules", "ksieve", module, "main.nf")).read()
        label = re.search(r"label '(\w+)'", text).group(1)
        cpus = re.search(r"cpus\s*=\s*\{?\s*(\d+)", labels[label]).group(1)
        memory_gb = int(re.search(r"memory\s*=\s*\{?\s*(\d+)\.GB", labels[label]).group(1))
        ext_args = next((re.search(r"ext\.args\s*=\s*'([^']*)'", body) for n, body in names.items()
                         if alias in n.split("|")), None)
        for single_end in (True, False):
            env = {"task.cpus": cpus, "task.memory": True, "task.memory.mega": memory_gb * 1024,
                   "ext.args": ext_args.group(1) if ext_args else "", "meta.id": "X",
                   "meta.single_end": single_end, "meta.part": "0/4" if alias == "KSIEVE_BUILD_HOST" else None,
                   "save_known": False}
            commands.add(render(section(text, "script:", "stub:"), env))
    return commands


def module_commands(cpus=6, memory_mb=36864):
    """{module: its ksieve command line} of every module of modules/ksieve, for a single-end sample of a
    task of `cpus` and `memory_mb` (no ext.args)."""
    commands = {}
    for module in sorted(os.listdir(os.path.join(NF, "modules", "ksieve"))):
        text = open(os.path.join(NF, "modules", "ksieve", module, "main.nf")).read()
        env = {"task.cpus": str(cpus), "task.memory": True, "task.memory.mega": memory_mb, "ext.args": "",
               "meta.id": "X", "meta.single_end": True, "meta.part": None, "save_known": False}
        commands[module] = render(section(text, "script:", "stub:"), env)
    return commands
