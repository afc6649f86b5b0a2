//! The files of `src/sql/` import each other without a cycle, so each can be read
//! knowing only the files beneath it (ARCHITECTURE.md lists them in that order).
//!
//! Imports are read from the source text: every `super::`, `self::` and `crate::sql::`
//! path, grouped imports included, resolved to the file of the longest module prefix
//! it names. An item a module file re-exports from one of its children
//! (`pub use child::Item`) resolves to the child; a module file's own `mod` and
//! `pub use` lines are not imports.
//!
//! `cargo test --test module_imports -- --nocapture` prints each file's imports.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// A module path below `crate`, e.g. `["sql", "query", "convert"]`.
type ModulePath = Vec<String>;

struct SourceTree {
    root: PathBuf,
    /// Every module under `sql`, with its source text.
    modules: BTreeMap<ModulePath, String>,
}

impl SourceTree {
    fn read(root: &Path) -> SourceTree {
        let mut modules = BTreeMap::new();
        let sql = vec!["sql".to_string()];
        modules.insert(sql.clone(), without_tests(read(&root.join("sql.rs"))));
        collect(&root.join("sql"), &sql, &mut modules);
        SourceTree {
            root: root.to_path_buf(),
            modules,
        }
    }

    fn file_name(&self, module: &ModulePath) -> String {
        match module.as_slice() {
            [only] => format!("{only}.rs"),
            [_, rest @ ..] => format!("{}.rs", rest.join("/")),
            [] => String::from("lib.rs"),
        }
    }

    /// The file a path from `base` names: the longest module prefix that exists, or
    /// the child a module file re-exports the named item from.
    fn resolve(&self, base: &ModulePath, segments: &[String]) -> Option<ModulePath> {
        let mut module = base.clone();
        let mut rest = segments;
        while let Some((first, tail)) = rest.split_first() {
            let mut next = module.clone();
            next.push(first.clone());
            if !self.modules.contains_key(&next) {
                break;
            }
            module = next;
            rest = tail;
        }
        if let Some(item) = rest.first() {
            if let Some(child) = self.reexporting_child(&module, item) {
                return Some(child);
            }
        }
        self.modules.contains_key(&module).then_some(module)
    }

    /// The child of `module` that `module` re-exports `item` from.
    fn reexporting_child(&self, module: &ModulePath, item: &str) -> Option<ModulePath> {
        let text = self.modules.get(module)?;
        for line in text.lines() {
            let Some(reexport) = line.trim().strip_prefix("pub use ") else {
                continue;
            };
            let child = reexport.split("::").next()?.trim();
            let names: Vec<&str> = reexport
                .split(|c: char| !(c.is_alphanumeric() || c == '_'))
                .collect();
            if names.contains(&item) {
                let mut path = module.clone();
                path.push(child.to_string());
                if self.modules.contains_key(&path) {
                    return Some(path);
                }
            }
        }
        None
    }

    /// The modules of `sql` that `module`'s file imports.
    fn imports(&self, module: &ModulePath) -> BTreeSet<ModulePath> {
        let text = &self.modules[module];
        let parent: ModulePath = module[..module.len() - 1].to_vec();
        let mut found = BTreeSet::new();
        for line in text.lines() {
            let trimmed = line.trim_start();
            if trimmed.starts_with("mod ")
                || trimmed.starts_with("pub mod ")
                || trimmed.starts_with("//")
            {
                continue;
            }
            let is_reexport = trimmed.starts_with("pub use ");
            for (prefix, base) in [
                ("crate::sql::", vec!["sql".to_string()]),
                ("super::", parent.clone()),
                ("self::", module.clone()),
            ] {
                for path in paths_after(line, text, prefix) {
                    let (base, path) = climb(&base, &path);
                    let Some(target) = self.resolve(&base, &path) else {
                        continue;
                    };
                    let own_child = target.len() > module.len() && target.starts_with(module);
                    if target != *module && !(is_reexport && own_child) {
                        found.insert(target);
                    }
                }
            }
        }
        // A module imported by name (`use super::query::{self, ..}`) and then used as
        // `query::item`: the item's own file, where the module re-exports it.
        for target in found.clone() {
            let Some(name) = target.last() else {
                continue;
            };
            for path in paths_after(text, text, &format!("{name}::")) {
                if let Some(item) = self.resolve(&target, &path) {
                    if item != *module {
                        found.insert(item);
                    }
                }
            }
        }
        found
    }
}

fn read(path: &Path) -> String {
    fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The text before a file's `#[cfg(test)] mod tests`: tests may import anything.
fn without_tests(mut text: String) -> String {
    if let Some(at) = text.find("#[cfg(test)]\nmod tests") {
        text.truncate(at);
    }
    text
}

fn collect(dir: &Path, module: &ModulePath, out: &mut BTreeMap<ModulePath, String>) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries {
        let path = entry.expect("directory entry").path();
        let Some(stem) = path.file_stem().and_then(|s| s.to_str()) else {
            continue;
        };
        if path.extension().and_then(|e| e.to_str()) != Some("rs") || stem == "tests" {
            continue;
        }
        let mut child = module.clone();
        child.push(stem.to_string());
        out.insert(child.clone(), without_tests(read(&path)));
        collect(&dir.join(stem), &child, out);
    }
}

/// `super::super::x` from `base`: the base climbed and the path left.
fn climb(base: &ModulePath, path: &[String]) -> (ModulePath, Vec<String>) {
    let mut base = base.clone();
    let mut rest = path;
    while rest.first().map(String::as_str) == Some("super") {
        base.pop();
        rest = &rest[1..];
    }
    (base, rest.to_vec())
}

/// The paths (as segments) that follow `prefix` on `line`, with a `{...}` group
/// (which may run over the following lines of `text`) split into its members.
fn paths_after(line: &str, text: &str, prefix: &str) -> Vec<Vec<String>> {
    let mut paths = Vec::new();
    let mut rest = line;
    while let Some(at) = rest.find(prefix) {
        let preceded_by_ident = rest[..at]
            .chars()
            .last()
            .is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':');
        let after = &rest[at + prefix.len()..];
        rest = after;
        if preceded_by_ident {
            continue;
        }
        let from = line.len() - after.len();
        let tail = &text[text.find(line).unwrap_or(0) + from..];
        expand(tail, &[], &mut paths);
    }
    paths
}

/// Reads one path at the start of `text` below `stem`, pushing every full path.
fn expand(text: &str, stem: &[String], out: &mut Vec<Vec<String>>) -> usize {
    let mut segments = stem.to_vec();
    let bytes = text.as_bytes();
    let mut i = 0;
    loop {
        let start = i;
        while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_') {
            i += 1;
        }
        if i > start {
            segments.push(text[start..i].to_string());
        }
        let group = if text[i..].starts_with("::{") {
            Some(3)
        } else if i == start && text[i..].starts_with('{') {
            Some(1)
        } else {
            None
        };
        if let Some(opening) = group {
            i += opening;
            loop {
                while i < bytes.len() && (bytes[i].is_ascii_whitespace() || bytes[i] == b',') {
                    i += 1;
                }
                if i >= bytes.len() || bytes[i] == b'}' {
                    return i + 1;
                }
                i += expand(&text[i..], &segments, out);
                // Skip `as alias` and anything else up to the member's end.
                while i < bytes.len() && bytes[i] != b',' && bytes[i] != b'}' {
                    i += 1;
                }
            }
        }
        if text[i..].starts_with("::") {
            i += 2;
            continue;
        }
        out.push(segments);
        return i;
    }
}

/// A cycle among `graph`'s nodes, if there is one.
fn find_cycle(graph: &BTreeMap<ModulePath, BTreeSet<ModulePath>>) -> Option<Vec<ModulePath>> {
    fn visit(
        node: &ModulePath,
        graph: &BTreeMap<ModulePath, BTreeSet<ModulePath>>,
        done: &mut BTreeSet<ModulePath>,
        stack: &mut Vec<ModulePath>,
    ) -> Option<Vec<ModulePath>> {
        if let Some(at) = stack.iter().position(|n| n == node) {
            let mut cycle = stack[at..].to_vec();
            cycle.push(node.clone());
            return Some(cycle);
        }
        if done.contains(node) {
            return None;
        }
        stack.push(node.clone());
        for next in graph.get(node).into_iter().flatten() {
            if let Some(cycle) = visit(next, graph, done, stack) {
                return Some(cycle);
            }
        }
        stack.pop();
        done.insert(node.clone());
        None
    }
    let mut done = BTreeSet::new();
    graph
        .keys()
        .find_map(|node| visit(node, graph, &mut done, &mut Vec::new()))
}

#[test]
fn sql_files_import_each_other_without_a_cycle() {
    let tree = SourceTree::read(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"));
    let graph: BTreeMap<ModulePath, BTreeSet<ModulePath>> = tree
        .modules
        .keys()
        .map(|module| (module.clone(), tree.imports(module)))
        .collect();
    for (module, imports) in &graph {
        let names: Vec<String> = imports.iter().map(|m| tree.file_name(m)).collect();
        println!("{}: {}", tree.file_name(module), names.join(", "));
    }
    assert!(
        graph.len() > 40,
        "found only {} files under {}",
        graph.len(),
        tree.root.display()
    );
    let session = vec!["sql".to_string(), "session".to_string()];
    assert!(
        graph[&session].len() > 5,
        "the parser found too few imports in session.rs: {:?}",
        graph[&session]
    );
    if let Some(cycle) = find_cycle(&graph) {
        let names: Vec<String> = cycle.iter().map(|m| tree.file_name(m)).collect();
        panic!("import cycle: {}", names.join(" -> "));
    }
}
