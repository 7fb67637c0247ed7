"""Finding the `.contiguous()` deletions of the mutation study, and applying them.

Three patterns (Python `ast`, positions checked against the recorded sites):

* `chain`: a `.view(...)` / `.view_as(...)` call whose receiver is a `.contiguous()` call,
  `x.transpose(1, 2).contiguous().view(B, T, C)`: the edit deletes `.contiguous()` (from the
  `.` before `contiguous` to the closing parenthesis, exactly those characters);
* `assign`: `x = <expr>.contiguous()` (a single name target) where the closest earlier
  assignment to `x` (textually, in the same function) before a `x.view(...)` / `x.view_as(...)`
  call is that statement: the edit deletes the `.contiguous()` of the assignment.
* `return`: the receiver of the view is the result of a call of a function defined in the same
  file, either directly (`f(x).view(...)`, `self.f(x).view(...)`) or through the same closest-
  binding rule (`y = f(x)` ... `y.view(...)`, the whole right-hand side being the call, a
  single name target), where that function has exactly one `return` (not counting nested
  functions, classes and lambdas; no `yield`) and it is `return <expr>.contiguous()`: the edit
  deletes that `.contiguous()`. `f(...)` must name exactly one module-level `def f` and nothing
  else at module level, and the calling function must not bind `f` itself; `self.f(...)` must
  be called in a method whose class defines `f` in its own body, and no class of the file that
  names that class as a base may define `f` again. One edit can reach several views (a
  `_shape` helper applied to the query, key and value): each (edit, view) is a row of its own,
  and a view that runs after another view of the same edit raised is not reached.

Forms: A = `chain`, B = `assign` / `return` (a deleted `.contiguous()`); two more rewrite an
executed reshape-family call into the view it would have to be (`find_rewrites`):

* C (`reshape_method`): `x.reshape(...)` -> `x.view(...)` (the method name only; no keywords);
  (`reshape_function`): `torch.reshape(x, s)` -> `x.view(s)` when `x` is a plain name or
  attribute chain and there are exactly two positional arguments;
* F (`flatten_method` / `flatten_function`): `x.flatten(a, b)` / `torch.flatten(x, a, b)` ->
  the equivalent view, `x.view(-1)`, `x.view(x.shape[0], -1)`, `x.view(*x.shape[:a], -1)`,
  `x.view(-1, *x.shape[b + 1:])` or `x.view(*x.shape[:a], -1, *x.shape[b + 1:])`, when `x` is
  a plain name / attribute / subscript chain (it is written twice) and the dims are integer
  literals; negative or explicit end dims are resolved with the rank of the site's recorded
  example (`rank` in the row), positive start dims with the default end need none.

Positions: rows 1-based, columns 1-based characters, end exclusive (stridelint's JSON);
edits are byte offsets into the file (replacements carry the inserted text).
"""

import ast
import os

VIEW_OPS = ("view", "view_as")


def _line_starts(data):
    starts = [0]
    for i, b in enumerate(data):
        if b == 0x0A:
            starts.append(i + 1)
    return starts


class Text:
    """A file's bytes with conversions between byte offsets and (row, char column)."""

    def __init__(self, data):
        self.data = data
        self.starts = _line_starts(data)

    def offset(self, lineno, col_bytes):
        return self.starts[lineno - 1] + col_bytes

    def pos(self, off):
        """byte offset -> (row, 1-based char column)."""
        lo, hi = 0, len(self.starts) - 1
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if self.starts[mid] <= off:
                lo = mid
            else:
                hi = mid - 1
        line = lo + 1
        col = len(self.data[self.starts[lo]:off].decode("utf-8", errors="replace")) + 1
        return line, col

    def node_span(self, node):
        return self.offset(node.lineno, node.col_offset), self.offset(node.end_lineno, node.end_col_offset)


def _is_contig_call(node):
    return (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "contiguous"
            and not node.args and not node.keywords)


def _contig_edit(text, call):
    """Byte span of `.contiguous()` in `call` (from the dot to the closing parenthesis)."""
    _, end = text.node_span(call)
    attr_end = text.offset(call.func.end_lineno, call.func.end_col_offset)
    name_start = attr_end - len("contiguous")
    assert text.data[name_start:attr_end] == b"contiguous", text.data[name_start:attr_end]
    i = name_start - 1
    while i >= 0 and text.data[i] in b" \t\r\n\\":
        i -= 1
    if text.data[i:i + 1] != b".":
        return None
    return i, end


def _view_calls(tree):
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in VIEW_OPS:
            yield node


def _functions(tree):
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield node


def find(data, wanted):
    """Mutations in one file. `wanted`: set of (line, col, end_line, end_col, op) view sites
    (recorded positions); only views at those positions are kept. Returns a list of dicts:
    pattern, view (line, col, end_line, end_col, op), edit (byte_start, byte_end)."""
    text = Text(data)
    tree = ast.parse(data)
    out = []

    def site_of(call):
        s, e = text.node_span(call)
        return text.pos(s) + text.pos(e) + (call.func.attr,)

    returns = _Returns(tree)
    for call in _view_calls(tree):
        recv = call.func.value
        if _is_contig_call(recv):
            site = site_of(call)
            if site in wanted:
                span = _contig_edit(text, recv)
                if span:
                    out.append(dict(pattern="chain", view=site, edit=span))
    # assign pattern, per function (nested functions are walked on their own too). A name is
    # bound when its statement completes: the offset of a store is the end of its enclosing
    # assignment statement (the name itself for other binders: for, with, walrus, ...).
    parents = {}
    for node in ast.walk(tree):
        for ch in ast.iter_child_nodes(node):
            parents[id(ch)] = node

    def bound_at(name):
        p = parents.get(id(name))
        while p is not None and not isinstance(p, ast.stmt):
            p = parents.get(id(p))
        if isinstance(p, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
            return text.node_span(p)[1], p
        return text.offset(name.lineno, name.col_offset), None

    for fn in _functions(tree):
        inner = set()
        for sub in ast.walk(fn):
            if sub is not fn and isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
                for n in ast.walk(sub):
                    if n is not sub:
                        inner.add(id(n))
        stores = {}  # name -> list of (offset, contiguous Assign or None, call Assign or None)
        for node in ast.walk(fn):
            if id(node) in inner or not isinstance(node, ast.Name) or not isinstance(node.ctx, (ast.Store, ast.Del)):
                continue
            off, stmt = bound_at(node)
            contig = called = None
            if isinstance(stmt, (ast.Assign, ast.AnnAssign)) and stmt.value is not None:
                targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
                if len(targets) == 1 and targets[0] is node:
                    if _is_contig_call(stmt.value):
                        contig = stmt
                    elif isinstance(stmt.value, ast.Call):
                        called = stmt
            stores.setdefault(node.id, []).append((off, contig, called))
        def emit(pattern, call, contig_call):
            """One mutation: delete `contig_call`'s `.contiguous()` in front of the view `call`."""
            site = site_of(call)
            if site in wanted:
                span = _contig_edit(text, contig_call)
                if span:
                    out.append(dict(pattern=pattern, view=site, edit=span))

        for call in _view_calls(fn):
            if id(call) in inner:
                continue
            recv = call.func.value
            source = None  # the call whose result is the view's receiver (pattern `return`)
            if isinstance(recv, ast.Call) and not _is_contig_call(recv):
                source = recv
            elif isinstance(recv, ast.Name):
                start = text.offset(call.lineno, call.col_offset)
                prior = [p for p in stores.get(recv.id, []) if p[0] <= start]
                if not prior:
                    continue
                o, n, c = max(prior, key=lambda p: p[0])
                if n is not None:
                    emit("assign", call, n.value)
                    continue
                if c is not None:
                    source = c.value
            if source is None:
                continue
            ret = returns.contiguous_result(fn, source)
            if ret is not None:
                emit("return", call, ret.value)
    return out


def _own_nodes(fn):
    """The nodes of `fn`'s body that belong to it (not to nested functions, classes, lambdas)."""
    todo = list(ast.iter_child_nodes(fn))
    while todo:
        n = todo.pop()
        yield n
        if not isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            todo.extend(ast.iter_child_nodes(n))


def _single_contig_return(fn):
    """`fn`'s only `return` statement when it is `return <expr>.contiguous()` (and `fn` does not
    yield), else None."""
    rets = []
    for n in _own_nodes(fn):
        if isinstance(n, (ast.Yield, ast.YieldFrom)):
            return None
        if isinstance(n, ast.Return):
            rets.append(n)
    if len(rets) == 1 and rets[0].value is not None and _is_contig_call(rets[0].value):
        return rets[0]
    return None


def _binds(node, name):
    """Whether statement/function `node` binds `name` anywhere (parameters included)."""
    for n in ast.walk(node):
        if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, (ast.Store, ast.Del)):
            return True
        if isinstance(n, ast.arg) and n.arg == name:
            return True
        if n is not node and isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and n.name == name:
            return True
        if isinstance(n, (ast.Import, ast.ImportFrom)):
            for a in n.names:
                if (a.asname or a.name.split(".")[0]) == name:
                    return True
    return False


class _Returns:
    """Resolves `f(...)` / `self.f(...)` calls to functions of the same file (pattern `return`)."""

    def __init__(self, tree):
        self.module = {}  # name -> [module-level statements binding it]
        for st in tree.body:
            names = set()
            if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                names.add(st.name)
            else:  # (conservative: a def's body is another scope, an `if`'s is not)
                for n in ast.walk(st):
                    if isinstance(n, ast.Name) and isinstance(n.ctx, (ast.Store, ast.Del)):
                        names.add(n.id)
                    elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                        names.add(n.name)
                    elif isinstance(n, (ast.Import, ast.ImportFrom)):
                        names.update(a.asname or a.name.split(".")[0] for a in n.names)
            for name in names:
                self.module.setdefault(name, []).append(st)
        self.owner = {}  # id(method) -> its ClassDef
        self.classes = []
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef):
                self.classes.append(node)
                for st in node.body:
                    if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef)):
                        self.owner[id(st)] = node

    @staticmethod
    def _method(cls, name):
        found = [st for st in cls.body if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef)) and st.name == name]
        return found[-1] if found else None

    def callee(self, caller, call):
        f = call.func
        if isinstance(f, ast.Name):
            binders = self.module.get(f.id, [])
            if len(binders) != 1 or not isinstance(binders[0], (ast.FunctionDef, ast.AsyncFunctionDef)):
                return None
            if _binds(caller, f.id):
                return None
            return binders[0]
        if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id == "self":
            cls = self.owner.get(id(caller))
            if cls is None:
                return None
            m = self._method(cls, f.attr)
            if m is None:
                return None
            for sub in self.classes:
                if sub is not cls and any(isinstance(b, ast.Name) and b.id == cls.name for b in sub.bases):
                    if self._method(sub, f.attr) is not None:
                        return None
            return m
        return None

    def contiguous_result(self, caller, call):
        g = self.callee(caller, call)
        return _single_contig_return(g) if g is not None else None


def _parts(edit):
    """(start, end, inserted bytes) of an edit: (s, e) deletes, (s, e, text) replaces."""
    s, e = edit[0], edit[1]
    rep = edit[2] if len(edit) > 2 else b""
    return s, e, rep.encode("utf-8") if isinstance(rep, str) else rep


def apply(data, edit):
    s, e, rep = _parts(edit)
    return data[:s] + rep + data[e:]


def moved(data, edit, view_span):
    """The view call's (start, end) byte offsets after `edit` (a deletion or a replacement
    inside or exactly over the call)."""
    s, e, rep = _parts(edit)
    n = e - s - len(rep)

    def f(off):
        if off >= e:
            return off - n
        assert off <= s, "offset inside the edited text"
        return off

    return f(view_span[0]), f(view_span[1])


def view_span(data, site):
    """Byte span of the view call at `site` (line, col, end_line, end_col) in `data`."""
    text = Text(data)
    line, col, eline, ecol = site[:4]

    def off(row, c):
        start = text.starts[row - 1]
        end = text.starts[row] if row < len(text.starts) else len(data)
        s = data[start:end].decode("utf-8", errors="replace")
        return start + len(s[: c - 1].encode("utf-8"))

    return off(line, col), off(eline, ecol)


# --- overlay trees --------------------------------------------------------------------------
# The tree may be reached through a symlink (target/realcode/src -> the shared tree); every
# path is resolved first, and no write may ever land inside the tree itself.


def hardlink_copy(tree, path):
    """`cp -al` of the tree's contents into the new directory `path` (never a symlink)."""
    import subprocess

    src = os.path.realpath(tree)
    if os.path.lexists(path):
        raise FileExistsError(path)
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    subprocess.run(["cp", "-al", src + "/.", path], check=True)
    if os.path.islink(path) or not os.path.isdir(path) or os.path.samefile(path, src):
        raise RuntimeError("overlay %s is not a separate directory" % path)
    return path


def _checked(slot, tree, rel):
    root = os.path.realpath(slot)
    t = os.path.realpath(tree)
    dst = os.path.join(root, rel)
    parent = os.path.realpath(os.path.dirname(dst))
    if root == t or not (parent + os.sep).startswith(root + os.sep) or (parent + os.sep).startswith(t + os.sep):
        raise RuntimeError("refusing to write %s: not inside the overlay %s" % (dst, root))
    return dst


def replace_file(slot, tree, rel, data, mtime=None):
    """Put `data` at `rel` in the overlay (a new inode; the tree's file is untouched)."""
    dst = _checked(slot, tree, rel)
    os.unlink(dst)
    with open(dst, "wb") as f:
        f.write(data)
    if mtime is not None:
        os.utime(dst, (mtime, mtime))


def restore_file(slot, tree, rel):
    """Link the tree's file back into the overlay."""
    dst = _checked(slot, tree, rel)
    if os.path.lexists(dst):
        os.unlink(dst)
    os.link(os.path.join(os.path.realpath(tree), rel), dst)


# --- forms C and F: a reshape-family call rewritten as a view --------------------------------

FORMS = {"chain": "A", "assign": "B", "return": "B", "reshape_method": "C", "reshape_function": "C",
         "flatten_method": "F", "flatten_function": "F"}
REWRITE_OPS = ("reshape", "flatten")


def _plain(node):
    """A receiver that may be written twice: names, attributes, constant subscripts; no calls."""
    if isinstance(node, ast.Name):
        return True
    if isinstance(node, ast.Attribute):
        return _plain(node.value)
    if isinstance(node, ast.Subscript):
        return _plain(node.value) and not any(isinstance(n, ast.Call) for n in ast.walk(node.slice))
    return False


def _int(node):
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) and isinstance(node.operand, ast.Constant) \
            and type(node.operand.value) is int:
        return -node.operand.value
    return None


def flatten_view_args(x, start, end, rank):
    """The arguments of the view equal to `x.flatten(start, end)` (`end` None: the default -1),
    or None when the dims need a rank that is not known or the flatten merges nothing."""
    if end is None or end == -1:
        if start < 0:
            if rank is None:
                return None
            start += rank
        if start == 0:
            return "-1"
        return "%s.shape[0], -1" % x if start == 1 else "*%s.shape[:%d], -1" % (x, start)
    if rank is None or rank == 0:
        return None
    start, end = start % rank if start < 0 else start, end % rank if end < 0 else end
    if end <= start:
        return None
    if end == rank - 1:
        return flatten_view_args(x, start, None, rank)
    tail = "*%s.shape[%d:]" % (x, end + 1)
    return "-1, " + tail if start == 0 else "*%s.shape[:%d], -1, %s" % (x, start, tail)


def _flatten_dims(args, keywords):
    """(start, end) of a flatten call's integer-literal dims (end None: default), or None."""
    names = ("start_dim", "end_dim")
    vals = [_int(a) for a in args]
    if len(args) > 2 or None in vals or any(k.arg not in names for k in keywords):
        return None
    dims = dict(zip(names, vals))
    for k in keywords:
        v = _int(k.value)
        if v is None:
            return None
        dims[k.arg] = v
    return dims.get("start_dim", 0), dims.get("end_dim")


def _rewrite(text, call, rank):
    """(pattern, edit) rewriting the reshape/flatten `call` as a view, or None."""
    f = call.func
    if not isinstance(f, ast.Attribute) or f.attr not in REWRITE_OPS:
        return None
    src = lambda n: text.data[slice(*text.node_span(n))].decode("utf-8")  # noqa: E731
    is_fn = isinstance(f.value, ast.Name) and f.value.id == "torch"
    if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
        return None
    start, end = text.node_span(call)
    if f.attr == "reshape" and not is_fn:
        if call.keywords or not call.args:
            return None
        attr_end = text.offset(f.end_lineno, f.end_col_offset)
        return "reshape_method", (attr_end - len("reshape"), attr_end, "view")
    if f.attr == "reshape":
        if call.keywords or len(call.args) != 2 or not _plain(call.args[0]):
            return None
        return "reshape_function", (start, end, "%s.view(%s)" % (src(call.args[0]), src(call.args[1])))
    x = call.args[0] if is_fn and call.args else (None if is_fn else f.value)
    if x is None or not _plain(x):
        return None
    dims = _flatten_dims(call.args[1:] if is_fn else call.args, call.keywords)
    if dims is None:
        return None
    view = flatten_view_args(src(x), dims[0], dims[1], rank)
    if view is None:
        return None
    return ("flatten_function" if is_fn else "flatten_method"), (start, end, "%s.view(%s)" % (src(x), view))


def row_edit(row):
    """A mutations.jsonl row's edit as (byte_start, byte_end, inserted text)."""
    e = row["edit"]
    return e["byte_start"], e["byte_end"], e.get("inserted", "")


def row_form(row):
    return row.get("form") or FORMS[row["pattern"]]


def find_rewrites(data, wanted):
    """Forms C and F in one file. `wanted`: (line, col, end_line, end_col, op) of executed
    reshape / flatten sites -> the rank of the recorded example input (or None). Returns dicts:
    pattern, form, view (the site), edit (byte_start, byte_end, inserted text), rank."""
    text = Text(data)
    out = []
    for call in ast.walk(ast.parse(data)):
        if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)
                and call.func.attr in REWRITE_OPS):
            continue
        s, e = text.node_span(call)
        site = text.pos(s) + text.pos(e) + (call.func.attr,)
        if site not in wanted:
            continue
        r = _rewrite(text, call, wanted[site])
        if r is not None:
            out.append(dict(pattern=r[0], form=FORMS[r[0]], view=site, edit=r[1], rank=wanted[site]))
    return out
