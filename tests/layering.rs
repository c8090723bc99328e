//! The host modules form layers: no import cycle among the top-level modules of `src/`, nor
//! among the files (and sub-folders) of one module folder.
//!
//! Reads every file under `src/` (the library; `main.rs` is the binary on top of it), strips
//! comments and literals, and collects the paths the code names through `crate::`, `super::`,
//! `self::` and `use` declarations (child modules named without a prefix included). Each path
//! is resolved to the module file it lands in; a path that ends at a folder's `mod.rs` follows
//! that folder's `pub use` re-exports to the file that defines the name. A folder's `mod.rs`
//! contains its children: what it names among them (declarations, re-exports, a dispatch over
//! them) is containment, not an edge of the folder's graph; what it names outside the folder
//! is. Test modules (`#[cfg(test)] mod ... { }`, or in a file of their own) may reach across
//! layers, as tests drive one part with another, and are left out.
//!
//! Two graphs are checked: the top-level modules (`compile`, `device`, ...) and, per folder,
//! its children (files and sub-folders, `mod` for what the folder's `mod.rs` defines). A cycle
//! fails the test naming its modules and, per edge on it, the first line that made the edge.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// A module path inside the crate, e.g. `["compile", "codegen"]`; the crate root is empty.
type ModPath = Vec<String>;

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Ident(String),
    /// `::`
    Sep,
    Punct(char),
}

/// Tokens with their line numbers; comments, strings, chars and numbers are dropped.
fn tokenize(src: &str) -> Vec<(Tok, usize)> {
    let b: Vec<char> = src.chars().collect();
    let mut out = Vec::new();
    let (mut i, mut line) = (0, 1);
    let skip_to = |i: &mut usize, line: &mut usize, end: usize| {
        *line += b[*i..end.min(b.len())]
            .iter()
            .filter(|&&c| c == '\n')
            .count();
        *i = end;
    };
    while i < b.len() {
        let c = b[i];
        let next = b.get(i + 1).copied();
        if c == '\n' {
            line += 1;
            i += 1;
        } else if c.is_whitespace() {
            i += 1;
        } else if c == '/' && next == Some('/') {
            while i < b.len() && b[i] != '\n' {
                i += 1;
            }
        } else if c == '/' && next == Some('*') {
            let (mut depth, mut j) = (0usize, i);
            while j < b.len() {
                if b[j] == '/' && b.get(j + 1) == Some(&'*') {
                    depth += 1;
                    j += 2;
                } else if b[j] == '*' && b.get(j + 1) == Some(&'/') {
                    depth -= 1;
                    j += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    j += 1;
                }
            }
            skip_to(&mut i, &mut line, j);
        } else if (c == 'r' || c == 'b')
            && raw_string_hashes(&b[i..]).is_some()
            && (i == 0 || !is_ident_char(b[i - 1]))
        {
            let (start, hashes) = raw_string_hashes(&b[i..]).unwrap();
            let close: Vec<char> = std::iter::once('"')
                .chain(std::iter::repeat_n('#', hashes))
                .collect();
            let mut j = i + start;
            while j < b.len() && !b[j..].starts_with(&close) {
                j += 1;
            }
            skip_to(&mut i, &mut line, j + close.len());
        } else if c == '"' {
            let mut j = i + 1;
            while j < b.len() && b[j] != '"' {
                j += if b[j] == '\\' { 2 } else { 1 };
            }
            skip_to(&mut i, &mut line, j + 1);
        } else if c == '\'' {
            // A char literal ('x', '\n', '\u{..}') or a lifetime ('a).
            if next == Some('\\') {
                let mut j = i + 2;
                while j < b.len() && b[j] != '\'' {
                    j += 1;
                }
                i = j + 1;
            } else if b.get(i + 2) == Some(&'\'') {
                i += 3;
            } else {
                i += 1;
                while i < b.len() && is_ident_char(b[i]) {
                    i += 1;
                }
            }
        } else if c.is_ascii_digit() {
            while i < b.len() && (is_ident_char(b[i]) || b[i] == '.' && b.get(i + 1) != Some(&'.'))
            {
                i += 1;
            }
        } else if is_ident_char(c) {
            let start = i;
            while i < b.len() && is_ident_char(b[i]) {
                i += 1;
            }
            let word: String = b[start..i].iter().collect();
            out.push((Tok::Ident(word.trim_start_matches("r#").to_string()), line));
        } else if c == ':' && next == Some(':') {
            out.push((Tok::Sep, line));
            i += 2;
        } else {
            out.push((Tok::Punct(c), line));
            i += 1;
        }
    }
    out
}

fn is_ident_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// For `r"`, `r#"`, `br"` ...: the offset of the body and the number of `#`s.
fn raw_string_hashes(s: &[char]) -> Option<(usize, usize)> {
    let mut j = 0;
    if s.first() == Some(&'b') {
        j += 1;
    }
    if s.get(j) != Some(&'r') {
        return None;
    }
    j += 1;
    let mut hashes = 0;
    while s.get(j + hashes) == Some(&'#') {
        hashes += 1;
    }
    j += hashes;
    (s.get(j) == Some(&'"')).then_some((j + 1, hashes))
}

/// One path named by a file, resolved against the file's module.
#[derive(Debug, Clone)]
struct Reference {
    /// The (possibly inline) module the path was written in.
    from: ModPath,
    /// The path, absolute from the crate root.
    path: ModPath,
    line: usize,
    /// Written in a `pub use` of a `mod.rs` / `lib.rs`: a re-export, not a dependency, when
    /// it names one of the folder's own children.
    reexport: bool,
}

struct SourceFile {
    module: ModPath,
    rel: String,
    /// `mod.rs` or `lib.rs`: the file of a folder module.
    is_folder: bool,
    refs: Vec<Reference>,
}

fn collect_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            collect_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "rs") {
            out.push(p);
        }
    }
}

fn module_of(rel: &Path) -> (ModPath, bool) {
    let mut parts: Vec<String> = rel
        .iter()
        .map(|s| s.to_string_lossy().into_owned())
        .collect();
    let file = parts.pop().unwrap();
    let stem = file.trim_end_matches(".rs");
    if stem == "mod" || stem == "lib" {
        (parts, true)
    } else {
        parts.push(stem.to_string());
        (parts, false)
    }
}

/// A `use` tree from `toks[*pos]` up to its end, flattened into paths (`prefix` prepended).
fn parse_use_tree(
    toks: &[(Tok, usize)],
    pos: &mut usize,
    prefix: &[String],
    out: &mut Vec<ModPath>,
) {
    let mut path = prefix.to_vec();
    loop {
        match toks.get(*pos).map(|t| &t.0) {
            Some(Tok::Ident(w)) => {
                if w == "self" && !path.is_empty() && path.len() == prefix.len() {
                    // `{self, ..}`: the prefix itself.
                } else {
                    path.push(w.clone());
                }
                *pos += 1;
                if toks.get(*pos).map(|t| &t.0) == Some(&Tok::Sep) {
                    *pos += 1;
                    continue;
                }
                if toks.get(*pos).map(|t| &t.0) == Some(&Tok::Ident("as".into())) {
                    *pos += 2;
                }
                out.push(path);
                return;
            }
            Some(Tok::Punct('*')) => {
                *pos += 1;
                out.push(path);
                return;
            }
            Some(Tok::Punct('{')) => {
                *pos += 1;
                loop {
                    match toks.get(*pos).map(|t| &t.0) {
                        Some(Tok::Punct('}')) => {
                            *pos += 1;
                            return;
                        }
                        Some(Tok::Punct(',')) => *pos += 1,
                        None => return,
                        _ => parse_use_tree(toks, pos, &path, out),
                    }
                }
            }
            _ => return,
        }
    }
}

/// Resolves `crate::`, `super::` and `self::` (and a leading child-module name in a `use`).
fn absolute(path: &[String], module: &[String], modules: &BTreeSet<ModPath>) -> Option<ModPath> {
    let first = path.first()?;
    match first.as_str() {
        "crate" => Some(path[1..].to_vec()),
        "super" | "self" => {
            let mut base = module.to_vec();
            let mut i = 0;
            while i < path.len() && (path[i] == "super" || path[i] == "self") {
                if path[i] == "super" {
                    base.pop()?;
                }
                i += 1;
            }
            base.extend_from_slice(&path[i..]);
            Some(base)
        }
        _ => {
            let mut child = module.to_vec();
            child.push(first.clone());
            modules.contains(&child).then(|| {
                let mut p = module.to_vec();
                p.extend_from_slice(path);
                p
            })
        }
    }
}

fn parse_file(
    module: &ModPath,
    is_folder: bool,
    src: &str,
    modules: &BTreeSet<ModPath>,
) -> (Vec<Reference>, Vec<ModPath>) {
    let toks = tokenize(src);
    let mut refs = Vec::new();
    let mut test_modules = Vec::new();
    // Inline modules open here: (name, brace depth inside it, is a test module).
    let mut scopes: Vec<(String, usize, bool)> = Vec::new();
    let mut depth = 0usize;
    let mut i = 0;
    let is = |i: usize, t: &Tok| toks.get(i).map(|x| &x.0) == Some(t);
    while i < toks.len() {
        let here: ModPath = module
            .iter()
            .cloned()
            .chain(scopes.iter().map(|s| s.0.clone()))
            .collect();
        let in_test = scopes.iter().any(|s| s.2);
        match &toks[i].0 {
            Tok::Punct('{') => {
                depth += 1;
                i += 1;
            }
            Tok::Punct('}') => {
                if scopes.last().is_some_and(|s| s.1 == depth) {
                    scopes.pop();
                }
                depth = depth.saturating_sub(1);
                i += 1;
            }
            Tok::Ident(w) if w == "mod" => {
                let test = toks[i.saturating_sub(8)..i].windows(4).any(|w| {
                    w.iter().map(|t| &t.0).eq([
                        &Tok::Ident("cfg".into()),
                        &Tok::Punct('('),
                        &Tok::Ident("test".into()),
                        &Tok::Punct(')'),
                    ])
                });
                match (toks.get(i + 1), toks.get(i + 2).map(|t| &t.0)) {
                    (Some((Tok::Ident(name), _)), Some(Tok::Punct('{'))) => {
                        depth += 1;
                        scopes.push((name.clone(), depth, test));
                        i += 3;
                    }
                    // A test module in a file of its own.
                    (Some((Tok::Ident(name), _)), Some(Tok::Punct(';'))) if test || in_test => {
                        test_modules.push([&here[..], std::slice::from_ref(name)].concat());
                        i += 3;
                    }
                    _ => i += 1,
                }
            }
            Tok::Ident(w) if w == "use" => {
                let reexport = is_folder
                    && scopes.is_empty()
                    && i > 0
                    && (is(i - 1, &Tok::Ident("pub".into())) || is(i - 1, &Tok::Punct(')')));
                let line = toks[i].1;
                i += 1;
                let mut paths = Vec::new();
                parse_use_tree(&toks, &mut i, &[], &mut paths);
                if !in_test {
                    for p in paths {
                        if let Some(path) = absolute(&p, &here, modules) {
                            refs.push(Reference {
                                from: here.clone(),
                                path,
                                line,
                                reexport,
                            });
                        }
                    }
                }
            }
            // A path in code: from `crate`, `super`, `self` or a child module's name.
            Tok::Ident(w)
                if is(i + 1, &Tok::Sep)
                    && !(i > 0 && is(i - 1, &Tok::Sep))
                    && (["crate", "super", "self"].contains(&w.as_str())
                        || modules.contains(&[&here[..], std::slice::from_ref(w)].concat())) =>
            {
                let line = toks[i].1;
                let mut p = vec![w.clone()];
                i += 1;
                while is(i, &Tok::Sep) {
                    match toks.get(i + 1) {
                        Some((Tok::Ident(n), _)) => {
                            p.push(n.clone());
                            i += 2;
                        }
                        _ => break,
                    }
                }
                if !in_test {
                    if let Some(path) = absolute(&p, &here, modules) {
                        refs.push(Reference {
                            from: here.clone(),
                            path,
                            line,
                            reexport: false,
                        });
                    }
                }
            }
            _ => i += 1,
        }
    }
    (refs, test_modules)
}

struct Crate {
    files: Vec<SourceFile>,
    modules: BTreeSet<ModPath>,
    /// Per folder module: name re-exported by its `mod.rs` -> the child module it comes from.
    reexports: BTreeMap<ModPath, BTreeMap<String, String>>,
}

fn read_crate(src: &Path) -> Crate {
    let mut paths = Vec::new();
    collect_files(src, &mut paths);
    let mut raw = Vec::new();
    for p in paths {
        let rel = p.strip_prefix(src).unwrap().to_path_buf();
        if rel == Path::new("main.rs") {
            continue;
        }
        let (module, is_folder) = module_of(&rel);
        raw.push((module, is_folder, rel, std::fs::read_to_string(&p).unwrap()));
    }
    let modules: BTreeSet<ModPath> = raw.iter().map(|r| r.0.clone()).collect();
    let parsed: Vec<_> = raw
        .iter()
        .map(|(module, is_folder, _, text)| parse_file(module, *is_folder, text, &modules))
        .collect();
    let tests: Vec<ModPath> = parsed.iter().flat_map(|p| p.1.clone()).collect();
    let files: Vec<SourceFile> = raw
        .into_iter()
        .zip(parsed)
        .filter(|((module, ..), _)| !tests.iter().any(|t| module.starts_with(t)))
        .map(|((module, is_folder, rel, _), (refs, _))| SourceFile {
            refs,
            module,
            is_folder,
            rel: format!("src/{}", rel.display()),
        })
        .collect();
    let mut reexports: BTreeMap<ModPath, BTreeMap<String, String>> = BTreeMap::new();
    for f in files.iter().filter(|f| f.is_folder) {
        for r in f.refs.iter().filter(|r| r.reexport && r.from == f.module) {
            let n = f.module.len();
            if r.path.len() > n + 1 && r.path[..n] == f.module[..] {
                let name = r.path.last().unwrap().clone();
                reexports
                    .entry(f.module.clone())
                    .or_default()
                    .insert(name, r.path[n].clone());
            }
        }
    }
    Crate {
        files,
        modules,
        reexports,
    }
}

/// The dependency edges between the nodes of one graph, each with the lines that made it.
type Edges = BTreeMap<(String, String), Vec<String>>;

impl Crate {
    /// The module file a resolved path lands in (longest known prefix).
    fn target(&self, path: &[String]) -> ModPath {
        (0..=path.len())
            .rev()
            .map(|n| path[..n].to_vec())
            .find(|p| self.modules.contains(p))
            .unwrap_or_default()
    }

    /// The graph among the children of `folder` (`mod` is the folder's own file).
    fn graph(&self, folder: &[String]) -> Edges {
        let n = folder.len();
        let node = |m: &[String], item: Option<&String>| -> Option<String> {
            if m.len() < n || m[..n] != *folder {
                return None;
            }
            if m.len() > n {
                return Some(m[n].clone());
            }
            let via = item.and_then(|i| self.reexports.get(folder).and_then(|r| r.get(i)));
            Some(via.cloned().unwrap_or_else(|| "mod".to_string()))
        };
        let mut edges = Edges::new();
        for f in &self.files {
            for r in &f.refs {
                let t = self.target(&r.path);
                let item = r.path.get(t.len());
                // A folder's `pub use` of its own child is its face, not a dependency.
                if r.reexport && t.len() > f.module.len() && t[..f.module.len()] == f.module[..] {
                    continue;
                }
                // Inline modules belong to the file's node.
                let (Some(a), Some(b)) = (node(&f.module, None), node(&t, item)) else {
                    continue;
                };
                // The folder's own file contains its children: declaring, re-exporting and
                // dispatching over them is what it is for.
                if a != b && a != "mod" {
                    let why = format!("{}:{} names {}", f.rel, r.line, r.path.join("::"));
                    edges.entry((a, b)).or_default().push(why);
                }
            }
        }
        edges
    }

    fn folders(&self) -> Vec<ModPath> {
        self.files
            .iter()
            .filter(|f| f.is_folder)
            .map(|f| f.module.clone())
            .collect()
    }
}

/// Strongly connected components of more than one node (Tarjan): each is a set of modules
/// that reach each other through their imports, its nodes sorted.
fn cycles(edges: &Edges) -> Vec<Vec<String>> {
    let nodes: BTreeSet<&String> = edges.keys().flat_map(|(a, b)| [a, b]).collect();
    let nodes: Vec<&String> = nodes.into_iter().collect();
    let idx = |s: &String| nodes.iter().position(|n| *n == s).unwrap();
    let mut adj = vec![Vec::new(); nodes.len()];
    for (a, b) in edges.keys() {
        adj[idx(a)].push(idx(b));
    }
    struct T<'a> {
        adj: &'a [Vec<usize>],
        index: Vec<Option<usize>>,
        low: Vec<usize>,
        on: Vec<bool>,
        stack: Vec<usize>,
        next: usize,
        out: Vec<Vec<usize>>,
    }
    fn visit(t: &mut T, v: usize) {
        t.index[v] = Some(t.next);
        t.low[v] = t.next;
        t.next += 1;
        t.stack.push(v);
        t.on[v] = true;
        for &w in &t.adj[v].clone() {
            match t.index[w] {
                None => {
                    visit(t, w);
                    t.low[v] = t.low[v].min(t.low[w]);
                }
                Some(iw) if t.on[w] => t.low[v] = t.low[v].min(iw),
                _ => {}
            }
        }
        if Some(t.low[v]) == t.index[v] {
            let mut comp = Vec::new();
            loop {
                let w = t.stack.pop().unwrap();
                t.on[w] = false;
                comp.push(w);
                if w == v {
                    break;
                }
            }
            if comp.len() > 1 {
                t.out.push(comp);
            }
        }
    }
    let mut t = T {
        adj: &adj,
        index: vec![None; nodes.len()],
        low: vec![0; nodes.len()],
        on: vec![false; nodes.len()],
        stack: Vec::new(),
        next: 0,
        out: Vec::new(),
    };
    for v in 0..nodes.len() {
        if t.index[v].is_none() {
            visit(&mut t, v);
        }
    }
    t.out
        .into_iter()
        .map(|c| {
            let mut c: Vec<String> = c.into_iter().map(|i| nodes[i].clone()).collect();
            c.sort();
            c
        })
        .collect()
}

fn describe(folder: &[String], comp: &[String], edges: &Edges) -> String {
    let name = if folder.is_empty() {
        "src/".to_string()
    } else {
        format!("src/{}/", folder.join("/"))
    };
    let mut s = format!("import cycle among {name}{{{}}}:\n", comp.join(", "));
    for ((a, b), why) in edges {
        if comp.contains(a) && comp.contains(b) {
            let more = match why.len() {
                1 => String::new(),
                n => format!(" and {} more", n - 1),
            };
            s += &format!("    {a} -> {b}   ({}{more})\n", why[0]);
        }
    }
    s
}

fn crate_src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

#[test]
fn no_import_cycle_among_modules() {
    let krate = read_crate(&crate_src());
    let mut report = String::new();
    for folder in krate.folders() {
        let edges = krate.graph(&folder);
        for comp in cycles(&edges) {
            report += &describe(&folder, &comp, &edges);
        }
    }
    assert!(report.is_empty(), "{report}");
}

/// The checker itself: it must see the kinds of cycle it is there to catch.
#[test]
fn finds_cycles_through_uses_paths_and_reexports() {
    let dir = std::env::temp_dir().join(format!("gemmtune-layering-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let write = |rel: &str, text: &str| {
        let p = dir.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    };
    write("lib.rs", "pub mod a;\npub mod b;\npub mod c;\n");
    // a -> b through a `use` tree, b -> a through an inline path: a top-level cycle.
    write(
        "a/mod.rs",
        "pub mod x;\npub mod y;\n#[cfg(test)]\nmod t;\npub use x::Thing;\nuse crate::{b::{self, Other}};\n",
    );
    write("a/t.rs", "use crate::c::Helper;\n");
    write(
        "a/x.rs",
        "pub struct Thing;\n// crate::c::Never is a comment\nfn f() { let _ = \"super::y::Z\"; }\n",
    );
    // y -> x through the folder's re-export, x does not name y: no cycle inside `a`.
    write(
        "a/y.rs",
        "use super::Thing;\n#[cfg(test)]\nmod tests { use crate::c::Helper; }\n",
    );
    write(
        "b.rs",
        "pub struct Other;\nfn g() -> crate::a::Thing { todo!() }\n",
    );
    write("c.rs", "pub struct Helper;\n");
    let krate = read_crate(&dir);
    let top = krate.graph(&[]);
    assert_eq!(cycles(&top), vec![vec!["a".to_string(), "b".to_string()]]);
    assert!(describe(&[], &cycles(&top)[0], &top).contains("src/b.rs:2 names a::Thing"));
    // The test modules' reach into `c` (inline and in a file) is not a dependency.
    assert!(!top.keys().any(|(_, b)| b == "c"));
    let inner = krate.graph(&["a".to_string()]);
    assert!(inner.contains_key(&("y".to_string(), "x".to_string())));
    assert!(cycles(&inner).is_empty());
    // Now x names y: a file-level cycle inside the folder.
    write("a/x.rs", "pub struct Thing;\nfn f() { super::y::g(); }\n");
    let krate = read_crate(&dir);
    assert_eq!(
        cycles(&krate.graph(&["a".to_string()])),
        vec![vec!["x".to_string(), "y".to_string()]]
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
