"""The seeded random combiner behind `make-mutants --seed N --count K`.

A file is a base (a containerd config of version 1, 2 or 3 with an nvidia runtime, or a
daemon.json with an nvidia runtime) plus 1 to 3 mutations drawn from a catalogue of mutation
classes, each one a mistake seen on real nodes.  Everything comes from random.Random(seed): the
same seed, count and catalogue give byte-identical files.  Each file's recipe (base, mutations,
what the file means the default runtime to be) goes into the manifest.

Drop-ins are written next to their main file (`NAME/config.toml` + `NAME/conf.d/*.toml`) and
imported by a relative path, which containerd resolves against the main file's folder.
"""
from __future__ import annotations

import json
import random

CRI_URI = '"io.containerd.grpc.v1.cri"'
RT3 = '"io.containerd.cri.v1.runtime"'
IMG3 = '"io.containerd.cri.v1.images"'
NV_BIN = "/usr/bin/nvidia-container-runtime"


# ================================================================ containerd model
class Table:
    def __init__(self, path, items=None, role=""):
        self.path = list(path)      # header segments, already quoted where needed
        self.items = list(items or [])  # [key, TOML literal]
        self.role = role            # cri, containerd, runtimes, rt:NAME, opts:NAME, images, pinned, other
        self.raw_header = None      # a header written verbatim (a mutation's)

    def header(self):
        return self.raw_header or "[" + ".".join(self.path) + "]"


class Ctd:
    def __init__(self, version, prefix, kind):
        self.version = version      # the `version = ...` line, or None
        self.top = []               # [key, literal] before any table
        self.tables = []
        self.prefix = prefix        # the CRI runtime config's path segments
        self.kind = kind            # "v1", "v2" or "v3"
        self.dropins = []           # [(relative path, Ctd)]

    def find(self, role):
        return next((t for t in self.tables if t.role == role), None)

    def runtime_names(self):
        return [t.role[3:] for t in self.tables if t.role.startswith("rt:")]

    def render(self):
        out = []
        if self.version:
            out.append(self.version)
        out += [f"{k} = {v}" for k, v in self.top]
        for t in self.tables:
            depth = 0 if t.role in ("cri", "images", "other") else 1 if t.role in ("containerd", "pinned") else 2
            ind = "  " * depth
            out.append(ind + t.header())
            out += [f"{ind}  {k} = {v}" for k, v in t.items]
        return "\n".join(out) + "\n"


def ctd_base(rng):
    kind = rng.choice(["v1", "v1", "v2", "v2", "v2", "v3", "v3"])
    default = rng.choice(["nvidia", "nvidia", "runc"])
    with_runc = default == "runc" or rng.random() < 0.7
    binary = rng.choice([NV_BIN, NV_BIN, "nvidia-container-runtime", "/usr/local/nvidia/toolkit/nvidia-container-runtime"])
    systemd = rng.random() < 0.6
    if kind == "v1":
        short = rng.random() < 0.6
        version = rng.choice([None, "version = 1"]) if short else "version = 1"
        cri = ["plugins", "cri"] if short else ["plugins", CRI_URI]
        c = Ctd(version, cri + ["containerd"], kind)
        c.tables.append(Table(cri, [["sandbox_image", '"registry.k8s.io/pause:3.9"']], "cri"))
    elif kind == "v2":
        cri = ["plugins", CRI_URI]
        c = Ctd("version = 2", cri + ["containerd"], kind)
        c.tables.append(Table(cri, [["sandbox_image", '"registry.k8s.io/pause:3.9"']], "cri"))
    else:
        c = Ctd("version = 3", ["plugins", RT3, "containerd"], kind)
        c.tables.append(Table(["plugins", IMG3, "pinned_images"], [["sandbox", '"registry.k8s.io/pause:3.10"']],
                              "pinned"))
    p = c.prefix
    c.tables.append(Table(p, [["default_runtime_name", f'"{default}"']], "containerd"))
    if with_runc:
        c.tables.append(Table(p + ["runtimes", "runc"], [["runtime_type", '"io.containerd.runc.v2"']], "rt:runc"))
        if systemd:
            c.tables.append(Table(p + ["runtimes", "runc", "options"], [["SystemdCgroup", "true"]], "opts:runc"))
    c.tables.append(Table(p + ["runtimes", "nvidia"], [["runtime_type", '"io.containerd.runc.v2"']], "rt:nvidia"))
    opts = [["BinaryName", f'"{binary}"']] + ([["SystemdCgroup", "true"]] if systemd else [])
    c.tables.append(Table(p + ["runtimes", "nvidia", "options"], opts, "opts:nvidia"))
    desc = f"containerd {kind}{' (plugins.cri)' if c.prefix[1] == 'cri' else ''}, default {default}" \
           f"{', runc' if with_runc else ''}, BinaryName {binary}{', SystemdCgroup' if systemd else ''}"
    return c, desc, default


def _cri_table(c):
    """The table the CRI plugin's own settings live in (v3: the runtime plugin's)."""
    return c.find("cri") or Table(["plugins", RT3], [], "cri")


def _ensure(c, table, at=0):
    if table not in c.tables:
        c.tables.insert(at, table)
    return table


def _set(t, key, lit):
    for it in t.items:
        if it[0] == key:
            it[1] = lit
            return
    t.items.append([key, lit])


# ---------------------------------------------------------------- containerd mutation classes
# each: (rng, cfg, state) -> detail string, or None when it does not apply to this file
def m_wrong_type(rng, c, st):
    choices = ["pwhd", "default_list", "version_float"]
    if c.kind != "v3":
        choices += ["sandbox_num", "cri_systemd_string"]
    else:
        choices += ["pinned_num"]
    ch = rng.choice(choices)
    if ch == "pwhd":
        _set(c.find("rt:nvidia"), "privileged_without_host_devices", '"false"')
        return 'nvidia: privileged_without_host_devices = "false"'
    if ch == "default_list":
        t = c.find("containerd")
        _set(t, "default_runtime_name", f'["{st["default"]}"]')
        return f'default_runtime_name = ["{st["default"]}"]'
    if ch == "version_float":
        if not c.version or c.version == "version = 1":
            return None
        c.version = c.version.replace(" = 2", " = 2.0").replace(" = 3", " = 3.0")
        return c.version
    if ch == "sandbox_num":
        _set(c.find("cri"), "sandbox_image", "3.9")
        return "sandbox_image = 3.9"
    if ch == "pinned_num":
        _set(c.find("pinned"), "sandbox", "3.10")
        return "pinned_images.sandbox = 3.10"
    t = _ensure(c, _cri_table(c))
    _set(t, "systemd_cgroup", '"true"')
    return 'CRI systemd_cgroup = "true"'


def m_default_misplaced(rng, c, st):
    t = c.find("containerd")
    val = next((v for k, v in t.items if k == "default_runtime_name"), None)
    if val is None:
        return None
    t.items = [it for it in t.items if it[0] != "default_runtime_name"]
    where = rng.choice(["top", "nvidia"])
    if where == "top":
        c.top.append(["default_runtime_name", val])
        return "default_runtime_name at the top level"
    c.find("rt:nvidia").items.append(["default_runtime_name", val])
    return "default_runtime_name inside the nvidia runtime table"


def m_wrong_plugin_id(rng, c, st):
    if c.prefix[1] not in (CRI_URI, RT3):
        return None
    old = c.prefix[1]
    ch = rng.choice(["grpcv1", "no_io", "one_quote"])
    if ch == "one_quote":
        targets = [t for t in c.tables if t.role in ("rt:nvidia", "opts:nvidia")]
        for t in targets:
            rest = t.path[2:]
            t.raw_header = "[plugins." + '"' + ".".join([old.strip('"')] + rest) + '"]'
        return f"the nvidia tables' whole dotted path in one pair of quotes: {targets[0].raw_header}"
    new = {"grpcv1": '"io.containerd.grpcv1.cri"', "no_io": '"containerd.grpc.v1.cri"'}[ch]
    if old == RT3:
        new = {"grpcv1": '"io.containerd.criv1.runtime"', "no_io": '"containerd.cri.v1.runtime"'}[ch]
    scope = rng.choice(["all", "nvidia"])
    for t in c.tables:
        if len(t.path) > 1 and t.path[1] == old and (scope == "all" or t.role in ("rt:nvidia", "opts:nvidia")):
            t.path[1] = new
    return f"plugin ID {new} ({'every CRI table' if scope == 'all' else 'the nvidia tables'})"


def m_runtime_type_value(rng, c, st):
    v = rng.choice(['"runc"', '"nvidia-container-runtime"', f'"{NV_BIN}"', '"io.containerd.runc.v2 "'])
    _set(c.find("rt:nvidia"), "runtime_type", v)
    return f"nvidia: runtime_type = {v}"


def m_runc_without_type(rng, c, st):
    t = c.find("rt:runc")
    if t is None:
        p = c.prefix + ["runtimes", "runc"]
        t = Table(p, [], "rt:runc")
        c.tables.insert(c.tables.index(c.find("rt:nvidia")), t)
        t.items = [["privileged_without_host_devices", "false"]]
        return "a runc table with no runtime_type (added)"
    t.items = [it for it in t.items if it[0] != "runtime_type"]
    if not t.items and c.find("opts:runc") is None:
        t.items = [["privileged_without_host_devices", "false"]]
    return "the runc table without runtime_type"


def m_binaryname_value(rng, c, st):
    v = rng.choice([f"{NV_BIN} --debug", f"{NV_BIN} ", "/usr/bin", "/usr/bin/", "/usr/bin/runc",
                    "nvidia-container-runtime -v"])
    _set(c.find("opts:nvidia"), "BinaryName", json.dumps(v))
    return f"BinaryName = {json.dumps(v)}"


def m_required_plugins(rng, c, st):
    v = rng.choice(['["cri"]', '["io.containerd.grpc.v1.cri"]'])
    c.top.append(["required_plugins", v])
    return f"required_plugins = {v}"


def m_empty_runtimes_table(rng, c, st):
    t = c.find("containerd")
    e = Table(c.prefix + ["runtimes"], [], "runtimes")
    c.tables.insert(c.tables.index(t) + 1, e)
    return "an empty [...containerd.runtimes] table"


def m_systemd_in_cri(rng, c, st):
    t = _ensure(c, _cri_table(c))
    _set(t, "SystemdCgroup", "true")
    return "SystemdCgroup = true in the CRI plugin table"


def m_plugins_linux(rng, c, st):
    v = rng.choice(['"nvidia-container-runtime"', f'"{NV_BIN}"'])
    c.tables.append(Table(["plugins", "linux"], [["runtime", v]], "other"))
    return f"[plugins.linux] runtime = {v}"


def m_key_case(rng, c, st):
    ch = rng.choice(["RUNTIME_TYPE", "Runtime_Type", "RuntimeType", "RUNTIMES", "Runtimes", "binaryname",
                     "BINARYNAME", "systemdcgroup", "Default_Runtime_Name"])
    if ch in ("RUNTIMES", "Runtimes"):
        for t in c.tables:
            if t.role.startswith(("rt:nvidia", "opts:nvidia")):
                i = len(c.prefix)
                t.path[i] = ch
        return f"[...containerd.{ch}.nvidia]"
    key, role = {"RUNTIME_TYPE": ("runtime_type", "rt:nvidia"), "Runtime_Type": ("runtime_type", "rt:nvidia"),
                 "RuntimeType": ("runtime_type", "rt:nvidia"), "binaryname": ("BinaryName", "opts:nvidia"),
                 "BINARYNAME": ("BinaryName", "opts:nvidia"), "systemdcgroup": ("SystemdCgroup", "opts:nvidia"),
                 "Default_Runtime_Name": ("default_runtime_name", "containerd")}[ch]
    t = c.find(role)
    for it in t.items:
        if it[0] == key:
            it[0] = ch
            return f"{key} written {ch}"
    return None


DROPIN_KINDS = ["disable_cri", "redeclare_cri", "v3_in_v2", "higher_version"]


def m_dropin(rng, c, st):
    ch = rng.choice(DROPIN_KINDS)
    if c.kind == "v3" and ch in ("v3_in_v2", "higher_version"):
        ch = rng.choice(["disable_cri", "redeclare_cri"])
    d = Ctd(c.version if c.version and c.version != "version = 1" else None, c.prefix, c.kind)
    name = "conf.d/99-" + ch.replace("_", "-") + ".toml"
    if ch == "disable_cri":
        d.top.append(["disabled_plugins", rng.choice(['["cri"]', '["io.containerd.grpc.v1.cri"]'])])
        detail = f"a drop-in with disabled_plugins = {d.top[0][1]}"
    elif ch == "redeclare_cri":
        if c.kind == "v3":
            d.tables.append(Table(["plugins", RT3, "containerd"], [["default_runtime_name", '"runc"']], "containerd"))
            detail = "a drop-in redeclaring the runtime plugin's containerd table (default runc)"
        else:
            d.tables.append(Table(c.prefix[:2], [["sandbox_image", '"registry.k8s.io/pause:3.9"']], "cri"))
            d.tables.append(Table(c.prefix, [["snapshotter", '"overlayfs"']], "containerd"))
            detail = "a drop-in redeclaring the CRI plugin's tables (sandbox_image, containerd.snapshotter)"
    elif ch == "v3_in_v2":
        if c.kind != "v2":
            return None
        d.version = "version = 3"
        d.tables.append(Table(["plugins", RT3, "containerd", "runtimes", "nvidia-cdi"],
                              [["runtime_type", '"io.containerd.runc.v2"']], "rt:nvidia-cdi"))
        d.tables.append(Table(["plugins", RT3, "containerd", "runtimes", "nvidia-cdi", "options"],
                              [["BinaryName", '"/usr/bin/nvidia-container-runtime.cdi"']], "opts:nvidia-cdi"))
        detail = "a version 3 drop-in (nvidia-cdi under io.containerd.cri.v1.runtime) in a version 2 file"
    else:  # the drop-in's version is higher than the main file's
        if c.kind != "v1":
            return None
        d.version = "version = 2"
        p = ["plugins", CRI_URI, "containerd"]
        d.tables.append(Table(p + ["runtimes", "nvidia-cdi"], [["runtime_type", '"io.containerd.runc.v2"']],
                              "rt:nvidia-cdi"))
        d.tables.append(Table(p + ["runtimes", "nvidia-cdi", "options"],
                              [["BinaryName", '"/usr/bin/nvidia-container-runtime.cdi"']], "opts:nvidia-cdi"))
        detail = "a version 2 drop-in (nvidia-cdi) in a version 1 file"
    c.dropins.append((name, d))
    imp = next((it for it in c.top if it[0] == "imports"), None)
    if imp is None:
        c.top.insert(0, ["imports", json.dumps([name])])
    else:
        imp[1] = json.dumps(json.loads(imp[1]) + [name])
    return detail


CTD_CLASSES = {
    "wrong-type": m_wrong_type,
    "default-runtime-misplaced": m_default_misplaced,
    "wrong-plugin-id": m_wrong_plugin_id,
    "runtime-type-not-a-shim": m_runtime_type_value,
    "runc-without-runtime-type": m_runc_without_type,
    "binaryname-value": m_binaryname_value,
    "required-plugins": m_required_plugins,
    "empty-runtimes-table": m_empty_runtimes_table,
    "systemdcgroup-in-cri-table": m_systemd_in_cri,
    "plugins-linux-runtime": m_plugins_linux,
    "key-case": m_key_case,
    "drop-in": m_dropin,
}


# ================================================================ daemon.json model: ordered pairs (duplicates allowed)
def jrender(pairs, ind=0):
    if isinstance(pairs, Obj):
        if not pairs.items:
            return "{}"
        pad = "  " * (ind + 1)
        body = ",\n".join(f"{pad}{json.dumps(k)}: {jrender(v, ind + 1)}" for k, v in pairs.items)
        return "{\n" + body + "\n" + "  " * ind + "}"
    if isinstance(pairs, list):
        return "[" + ", ".join(jrender(x, ind) for x in pairs) + "]"
    return json.dumps(pairs)


class Obj:
    def __init__(self, items=None):
        self.items = list(items or [])  # [key, value]

    def get(self, k):
        return next((v for kk, v in self.items if kk == k), None)

    def set(self, k, v):
        for it in self.items:
            if it[0] == k:
                it[1] = v
                return
        self.items.append([k, v])

    def rename(self, k, new):
        for it in self.items:
            if it[0] == k:
                it[0] = new
                return True
        return False

    def drop(self, k):
        self.items = [it for it in self.items if it[0] != k]


def dj_base(rng):
    default = rng.choice(["nvidia", "nvidia", None])
    path = rng.choice([NV_BIN, NV_BIN, "nvidia-container-runtime"])
    nv = Obj([["path", path]] + ([["runtimeArgs", []]] if rng.random() < 0.6 else []))
    o = Obj()
    if default:
        o.items.append(["default-runtime", default])
    o.items.append(["runtimes", Obj([["nvidia", nv]])])
    if rng.random() < 0.5:
        o.items.append(["exec-opts", ["native.cgroupdriver=systemd"]])
    if rng.random() < 0.4:
        o.items.append(["default-ulimits", Obj([["nofile", Obj([["Name", "nofile"], ["Hard", 65536],
                                                                  ["Soft", 65536]])]])])
    desc = f"daemon.json, default {default or '(runc)'}, nvidia path {path}"
    return o, desc, default or "runc"


def _nv(o):
    return o.get("runtimes").get("nvidia") if isinstance(o.get("runtimes"), Obj) else None


def j_path_value(rng, o, st):
    nv = _nv(o)
    if nv is None:
        return None
    v = rng.choice([f"{NV_BIN} --debug", f"{NV_BIN} ", "nvidia-container-runtime --log-level=debug"])
    nv.set("path", v)
    return f"nvidia path = {json.dumps(v)}"


def j_ulimits_type(rng, o, st):
    ch = rng.choice(["hard_string", "soft_string", "whole_string", "list"])
    if ch == "whole_string":
        o.set("default-ulimits", Obj([["nofile", "65536:65536"]]))
    elif ch == "list":
        o.set("default-ulimits", [Obj([["Name", "nofile"], ["Hard", 65536], ["Soft", 65536]])])
    else:
        k = "Hard" if ch == "hard_string" else "Soft"
        lim = Obj([["Name", "nofile"], ["Hard", 65536], ["Soft", 65536]])
        lim.set(k, "65536")
        o.set("default-ulimits", Obj([["nofile", lim]]))
    return f"default-ulimits with a value of the wrong type ({ch})"


def j_path_runc(rng, o, st):
    nv = _nv(o)
    if nv is None:
        return None
    nv.set("path", "runc")
    return 'nvidia "path": "runc"'


def j_key_case(rng, o, st):
    nv = _nv(o)
    if nv is None:
        return None
    ch = rng.choice(["Path", "PATH", "RuntimeArgs", "runtimeargs"])
    if ch in ("Path", "PATH"):
        nv.rename("path", ch)
    else:
        if not nv.rename("runtimeArgs", ch):
            nv.items.append([ch, ["--debug"]])
    return f"nvidia runtime key written {ch}"


def j_dup_runtimes(rng, o, st):
    second = Obj([["nvidia-cdi", Obj([["path", "/usr/bin/nvidia-container-runtime.cdi"]])]])
    where = rng.choice(["after", "before"])
    i = next(i for i, it in enumerate(o.items) if it[0] == "runtimes")
    o.items.insert(i + 1 if where == "after" else i, ["runtimes", second])
    return f"a second \"runtimes\" object ({where} the first, holding only nvidia-cdi)"


def j_add_runtime(rng, o, st):
    o.items.append(["add-runtime", rng.choice(["nvidia=/usr/bin/nvidia-container-runtime",
                                               Obj([["nvidia", NV_BIN]])])])
    return "add-runtime as a key"


def j_default_v1(rng, o, st):
    o.set("default-runtime", "io.containerd.runtime.v1.linux")
    st["intended_default"] = "io.containerd.runtime.v1.linux"
    return "default-runtime: io.containerd.runtime.v1.linux"


DJ_CLASSES = {
    "path-value": j_path_value,
    "default-ulimits-type": j_ulimits_type,
    "path-runc": j_path_runc,
    "key-case": j_key_case,
    "duplicate-runtimes": j_dup_runtimes,
    "add-runtime-key": j_add_runtime,
    "default-runtime-v1-linux": j_default_v1,
}


# ================================================================ the combiner
def combine(rng, base, classes):
    cfg, desc, default = base(rng)
    st = {"default": default, "intended_default": default}
    k = rng.choice([1, 1, 2, 2, 3])
    names = list(classes)
    rng.shuffle(names)
    done = []
    for name in names:
        if len(done) == k:
            break
        detail = classes[name](rng, cfg, st)
        if detail is not None:
            done.append({"class": name, "detail": detail})
    return cfg, {"base": desc, "mutations": done, "intended_default": st["intended_default"]}


def generate(seed, count, kind):
    """[(relative path, {relative path: text}, recipe)] for KIND containerd or daemon-json."""
    rng = random.Random("%s:%d" % (kind, seed))
    out = []
    for i in range(count):
        if kind == "containerd":
            cfg, recipe = combine(rng, ctd_base, CTD_CLASSES)
            name = "r%04d" % i
            if cfg.dropins:
                files = {f"{name}/config.toml": cfg.render()}
                for rel, d in cfg.dropins:
                    files[f"{name}/{rel}"] = d.render()
                main = f"{name}/config.toml"
            else:
                main = name + ".toml"
                files = {main: cfg.render()}
        else:
            cfg, recipe = combine(rng, dj_base, DJ_CLASSES)
            main = "j%04d.daemon.json" % i
            files = {main: jrender(cfg) + "\n"}
        recipe.update({"file": main, "seed": seed, "index": i})
        out.append((main, files, recipe))
    return out
