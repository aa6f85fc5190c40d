#!/usr/bin/env python3
"""Differential check of what counts as valid JSON input: stepscope against
Python's json module (stdlib only).

Each variant is a whole trace file. Python "accepts" it when json.loads(bytes)
succeeds. stepscope "accepts" it when `stepscope analyze FILE --json -` exits 0
with no skipped or repaired record (no import warning): a record that is bad
JSON is skipped and counted, which is a refusal of that record, so it counts
as not accepted. The two must agree except for the deliberate deviations in
DEVIATIONS (also in docs/robustness.md), and for accepted documents the
number of events read must equal the number of complete ("X") events in
Python's parse.

Usage: json_differential_test.py PATH_TO_STEPSCOPE   (exit 0: all agree)
"""
import json
import os
import subprocess
import sys
import tempfile

EV = '{"ph": "X", "cat": "cpu_op", "name": "op%d", "pid": 1, "tid": 1, "ts": %d, "dur": 5}'


def doc(events=None, head='{"schemaVersion": 1, "traceEvents": [', tail=']}'):
    events = [EV % (i, 10 * i) for i in range(3)] if events is None else events
    return (head + ", ".join(events) + tail).encode()


def with_field(field):
    """Three events, the middle one with an extra field (raw JSON text)."""
    return doc([EV % (0, 0), EV[:-1] % (1, 10) + ", " + field + "}", EV % (2, 20)])


def nested(depth):
    return with_field('"args": {"deep": ' + "[" * depth + "]" * depth + "}")


VARIANTS = {
    # valid
    "plain": doc(),
    "bare_array": ("[" + ", ".join(EV % (i, i) for i in range(2)) + "]").encode(),
    "whitespace_everywhere": b' \n\t{ "traceEvents" :\r\n [ ' + (EV % (0, 0)).encode() + b' ] \n}\n ',
    "bom": b"\xef\xbb\xbf" + doc(),
    "negative_zero_dur": with_field('"args": {"x": -0}'),
    "exponent_ts": doc([EV % (0, 0), '{"ph": "X", "name": "e", "pid": 1, "tid": 1, "ts": 1.5e3, "dur": 1E1}']),
    "big_integer_arg": with_field('"args": {"x": 123456789012345678901234567890}'),
    "huge_exponent_arg": with_field('"args": {"x": 1e309}'),
    "nan_arg": with_field('"args": {"x": NaN}'),
    "infinity_arg": with_field('"args": {"x": Infinity, "y": -Infinity}'),
    "nan_ts": doc([EV % (0, 0), '{"ph": "X", "name": "n", "pid": 1, "tid": 1, "ts": NaN, "dur": 1}']),
    "escaped_strings": with_field('"args": {"s": "a\\"b\\\\c\\/d\\n\\u00e9\\ud83d\\ude00"}'),
    "lone_surrogate_escape": with_field('"args": {"s": "\\ud800"}'),
    "utf8_names": doc([EV.replace("op%d", "\u00e9t\u00e9%d") % (0, 0)]),
    "duplicate_key_in_record": with_field('"ts": 15'),
    "duplicate_traceEvents": b'{"traceEvents": [' + (EV % (0, 0)).encode() + b'], "traceEvents": [' + (EV % (1, 1)).encode() + b"]}",
    "duplicate_other_top_key": b'{"a": 1, "a": 2, "traceEvents": [' + (EV % (0, 0)).encode() + b"]}",
    "deep_nesting_100": nested(100),
    "deep_nesting_2000": nested(2000),
    "other_members": b'{"deviceProperties": [{"id": 0, "name": "H200"}], "distributedInfo": {"rank": 0}, "traceEvents": [' + (EV % (0, 0)).encode() + b"]}",
    # invalid
    "empty_file": b"",
    "only_whitespace": b" \n ",
    "trailing_comma_in_events": b'{"traceEvents": [' + (EV % (0, 0)).encode() + b", ]}",
    "trailing_comma_top_level": b'{"traceEvents": [' + (EV % (0, 0)).encode() + b"],}",
    "trailing_comma_in_record": with_field('"args": {"x": 1},'),
    "leading_zero_ts": doc([EV % (0, 0), '{"ph": "X", "name": "z", "pid": 1, "tid": 1, "ts": 012, "dur": 1}']),
    "leading_zero_arg": with_field('"args": {"x": 012}'),
    "control_char_in_name": doc([EV.replace("op%d", "op\x01%d") % (0, 0)]),
    "unescaped_tab_in_name": doc([EV.replace("op%d", "op\t%d") % (0, 0)]),
    "invalid_utf8_in_name": doc().replace(b"op1", b"op\xff1"),
    "truncated_utf8_in_name": doc().replace(b"op1", b"op\xc3"),
    "comment": b"// trace\n" + doc(),
    "comment_inside": b'{"traceEvents": [/* one */ ' + (EV % (0, 0)).encode() + b"]}",
    "single_quotes": doc([EV.replace('"', "'") % (0, 0)]),
    "trailing_garbage": doc() + b" x",
    "two_documents": doc() + doc(),
    "truncated": doc()[:-2],
    "unclosed_string": doc().replace(b'"op1"', b'"op1'),
    "missing_comma_between_records": doc([EV % (0, 0) + " " + EV % (1, 1)]),
    "missing_colon": b'{"traceEvents" [' + (EV % (0, 0)).encode() + b"]}",
    "bad_literal": with_field('"args": {"x": tru}'),
    "bad_escape": with_field('"args": {"s": "\\x41"}'),
    "hex_number": with_field('"args": {"x": 0x10}'),
    "plus_number": doc([EV % (0, 0), '{"ph": "X", "name": "p", "pid": 1, "tid": 1, "ts": +5, "dur": 1}']),
    "dot_number": doc([EV % (0, 0), '{"ph": "X", "name": "d", "pid": 1, "tid": 1, "ts": 5., "dur": 1}']),
    "utf16_file": doc().decode().encode("utf-16"),
    "not_an_object_top": b'"traceEvents"',
    "bad_value_in_other_member": b'{"traceInfo": [1, , 2], "traceEvents": [' + (EV % (0, 0)).encode() + b"]}",
}

# name -> (stepscope's verdict, why it deliberately differs from Python's).
# True means stepscope accepts the document whole.
DEVIATIONS = {
    "nan_ts": (False, "NaN/Infinity are not JSON (RFC 8259): a record whose time is NaN is skipped and counted"),
    "invalid_utf8_in_name": (False, "Python refuses the file; stepscope repairs the record (U+FFFD) and counts it: "
                                    "both do not accept it whole, the rows agree only in that"),
    "truncated_utf8_in_name": (False, "as invalid_utf8_in_name"),
    "duplicate_traceEvents": (False, "ambiguous (Python keeps the last, other readers the first): refused"),
    "duplicate_other_top_key": (False, "as duplicate_traceEvents, for any top-level key"),
    "utf16_file": (False, "JSON exchanged between systems is UTF-8 (RFC 8259, section 8.1); Python's json.loads "
                          "also detects UTF-16 and UTF-32 from the first bytes, stepscope does not"),
    "leading_zero_arg": (True, "values of fields no analysis reads are checked for structure (brackets, strings, "
                               "UTF-8), not for number grammar"),
    "hex_number": (True, "as leading_zero_arg"),
    "bad_literal": (True, "as leading_zero_arg"),
    "bad_escape": (True, "as leading_zero_arg"),
    "bad_value_in_other_member": (True, "as leading_zero_arg, for top-level members other than traceEvents"),
}


def python_verdict(data):
    try:
        obj = json.loads(data)
    except (ValueError, RecursionError):
        return False, None
    events = obj.get("traceEvents") if isinstance(obj, dict) else obj
    if not isinstance(events, list):
        return False, None
    return True, sum(1 for e in events if isinstance(e, dict) and e.get("ph") == "X")


def stepscope_verdict(cli, path):
    p = subprocess.run([cli, "analyze", path, "--json", "-"], capture_output=True, timeout=60)
    if p.returncode != 0:
        return False, None, p.stderr.decode(errors="replace").strip()
    report = json.loads(p.stdout)
    imp = report["ranks"][0]["import"]
    repaired = imp["counters"].get("invalid_utf8_repaired", 0)
    whole = imp["skipped_records"] == 0 and repaired == 0
    return whole, imp["events"], "skipped %d, repaired %d" % (imp["skipped_records"], repaired)


def main():
    if len(sys.argv) != 2:
        print(__doc__)
        return 2
    cli = sys.argv[1]
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, data in VARIANTS.items():
            path = os.path.join(tmp, name + ".json")
            with open(path, "wb") as f:
                f.write(data)
            py_ok, py_events = python_verdict(data)
            ss_ok, ss_events, detail = stepscope_verdict(cli, path)
            expected = DEVIATIONS[name][0] if name in DEVIATIONS else py_ok
            status = "ok"
            if ss_ok != expected:
                status = "MISMATCH"
                failures.append(name)
            elif ss_ok and py_ok and ss_events != py_events:
                status = "EVENT COUNT %s != python %s" % (ss_events, py_events)
                failures.append(name)
            tag = " (deviation)" if name in DEVIATIONS else ""
            print("%-32s python=%-5s stepscope=%-5s %s%s  [%s]" % (name, py_ok, ss_ok, status, tag, detail[:150]))
    if failures:
        print("FAILED: " + ", ".join(failures))
        return 1
    print("all %d variants agree (%d deliberate deviations)" % (len(VARIANTS), len(DEVIATIONS)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
