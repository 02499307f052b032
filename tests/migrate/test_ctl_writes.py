"""psd2ctl writes only through the SQL functions of src/db/functions/
(each one transaction with its audit row); the one exception is migrate's
own bookkeeping in schema_migrations, which must work before any function
exists. Its reads may stay inline."""

import glob
import os
import re

import psd2lib

CTL = os.path.join(psd2lib.TOP, "src", "ctl")
WRITE = re.compile(r"\b(INSERT\s+INTO\s+[\w%]+|UPDATE\s+[\w%]+\s+SET|"
                   r"DELETE\s+FROM\s+[\w%]+|TRUNCATE)\b", re.I)
STRING = re.compile(r'"((?:[^"\\\n]|\\.)*)"')


def sql_text(path):
    """The C string literals of a file, adjacent ones joined."""
    with open(path) as f:
        src = re.sub(r"/\*.*?\*/", " ", f.read(), flags=re.S)
    return " ".join(STRING.findall(src))


def test_psd2ctl_writes_no_table_inline():
    found = {}
    for path in sorted(glob.glob(os.path.join(CTL, "*.c"))):
        writes = [m.group(0) for m in WRITE.finditer(sql_text(path))]
        if os.path.basename(path) == "ctl_migrate.c":
            writes = [w for w in writes
                      if not re.search(r"(INTO|UPDATE)\s+schema_migrations",
                                       w, re.I)]
        if writes:
            found[os.path.basename(path)] = writes
    assert found == {}, found


def test_the_check_sees_an_inline_write(tmp_path):
    p = tmp_path / "x.c"
    p.write_text('res = ctl_exec(db, "UPDATE psu SET "\n'
                 '    "locked_until = NULL", 0, NULL);\n')
    assert WRITE.search(sql_text(str(p)))
