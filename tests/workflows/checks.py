"""What the check scripts share: check() records each failed check and prints it, finish() ends the script
with the count of failures (exit status 1) or its summary line."""
import sys

failures = []


def check(cond, what):
    """cond, recording `what` as failed (and printing it) where cond is false."""
    if not cond:
        failures.append(what)
        print("FAIL: " + what, file=sys.stderr)
    return cond


def finish(name, passed):
    """Exit 1 with the count of failed checks, or print `name: passed`."""
    if failures:
        sys.exit(f"{name}: {len(failures)} checks failed")
    print(f"{name}: {passed}")
