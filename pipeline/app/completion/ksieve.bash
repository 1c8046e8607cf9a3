# bash completion of ksieve: commands, then the options of the command (read from its --help), then files.
_ksieve()
{
    local cur=${COMP_WORDS[COMP_CWORD]}
    local commands="build classify dedup merge intersect subtract info help"
    if [ "$COMP_CWORD" -eq 1 ]; then
        COMPREPLY=($(compgen -W "$commands --help --version" -- "$cur"))
        return
    fi
    local command=${COMP_WORDS[1]}
    if [ "$command" = help ]; then
        COMPREPLY=($(compgen -W "build classify dedup merge intersect subtract info" -- "$cur"))
        return
    fi
    if [[ "$cur" == -* ]]; then
        local options
        options=$("${COMP_WORDS[0]}" "$command" --help 2>/dev/null | grep -oE '(^|[ ,])--?[a-zA-Z][a-zA-Z0-9-]*' | tr -d ' ,' | sort -u)
        COMPREPLY=($(compgen -W "$options" -- "$cur"))
        return
    fi
    COMPREPLY=($(compgen -f -- "$cur"))
}
complete -o filenames -F _ksieve ksieve
