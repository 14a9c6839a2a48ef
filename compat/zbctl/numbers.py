"""Random numbers for the zbctl suite's round trip, and the checks of what came back.

zbctl prints what the gateway answers as JSON; the numbers inside are read here the way a
program that called zbctl would read them: as Python floats (compared bit for bit) and ints.

  numbers.py make            a variables document: 300 random doubles, large integers
  numbers.py back            stdin: zbctl's `activate jobs` output; prints the job's numbers
                             under other names (doublesBack, intsBack), to complete it with
  numbers.py check SENT      stdin: the activate output, a line "----", the create output;
                             exits 1 naming the first number that changed
"""

import json
import math
import random
import struct
import sys


def make() -> None:
    seed = random.randrange(2**32)
    rng = random.Random(seed)
    doubles = [rng.random() for _ in range(200)]
    while len(doubles) < 300:
        (d,) = struct.unpack("<d", rng.getrandbits(64).to_bytes(8, "little"))
        if math.isfinite(d):
            doubles.append(d)
    ints = [2**63 - 1, -(2**63), 2**53 + 1, -(2**53 + 1), 2**64 - 1, rng.getrandbits(63)]
    print(json.dumps({"seed": seed, "doubles": doubles, "ints": ints}))


def job_variables(activate_output: str) -> dict:
    jobs = json.loads(activate_output)["jobs"]
    if len(jobs) != 1:
        raise SystemExit(f"expected one job, got {len(jobs)}")
    return json.loads(jobs[0]["variables"])


def back() -> None:
    seen = job_variables(sys.stdin.read())
    print(json.dumps({"doublesBack": seen["doubles"], "intsBack": seen["ints"]}))


def same(what: str, sent: dict, doubles: object, ints: object) -> None:
    if not isinstance(doubles, list) or len(doubles) != len(sent["doubles"]):
        raise SystemExit(f"{what}: doubles came back as {doubles!r:.200} (seed {sent['seed']})")
    for i, (got, want) in enumerate(zip(doubles, sent["doubles"])):
        if not isinstance(got, float) or got.hex() != want.hex():
            raise SystemExit(
                f"{what}: double {i} went in as {want!r} and came back as {got!r} (seed {sent['seed']})"
            )
    if ints != sent["ints"]:
        raise SystemExit(f"{what}: integers went in as {sent['ints']} and came back as {ints}")


def check(sent_text: str) -> None:
    sent = json.loads(sent_text)
    activate_output, create_output = sys.stdin.read().split("\n----\n")
    try:
        seen = job_variables(activate_output)
    except (SystemExit, ValueError, KeyError) as error:
        raise SystemExit(f"{error}; zbctl's create answered: {create_output[:500]}") from error
    same("the job's variables", sent, seen.get("doubles"), seen.get("ints"))
    result = json.loads(json.loads(create_output)["variables"])
    same("the instance's result", sent, result.get("doubles"), result.get("ints"))
    same("the completed job's variables in the result", sent, result.get("doublesBack"), result.get("intsBack"))


if __name__ == "__main__":
    command = sys.argv[1] if len(sys.argv) > 1 else ""
    if command == "make":
        make()
    elif command == "back":
        back()
    elif command == "check" and len(sys.argv) == 3:
        check(sys.argv[2])
    else:
        raise SystemExit(__doc__)
