//! The default sizes of the storage caches, taken as shares of the memory this process
//! may use: the machine's (`MemTotal`), or the limit of the cgroup it runs in when that
//! is lower, so a server in a container sizes itself to the container. A fixed default
//! is either too small for a large machine (at 10,000,000 of the benchmark's rows, point
//! gets slowed by half once sled's page cache no longer held the packs read) or too
//! large for a small container, which the kernel then kills.

use std::path::{Path, PathBuf};

const MIB: u64 = 1024 * 1024;

/// Share of usable memory for sled's page cache, like PostgreSQL's usual advice for
/// `shared_buffers` (a quarter of the machine).
const SLED_CACHE_SHARE: u64 = 4;
/// Share of usable memory for each of the row and partition caches, up to
/// `ROW_AND_PARTITION_CACHE_MAX_MB`, the size every benchmark ran them with: larger ones
/// are unmeasured.
const ROW_AND_PARTITION_CACHE_SHARE: u64 = 16;
const ROW_AND_PARTITION_CACHE_MAX_MB: u64 = 512;
/// No default cache is made smaller than this, however little memory there is.
const SMALLEST_CACHE_MB: u64 = 16;
/// The defaults when the usable memory cannot be read (not Linux): the sizes pgwide had
/// before they followed memory.
const UNKNOWN_MEMORY_SIZES: CacheSizes = CacheSizes {
    sled_cache_mb: 2048,
    row_cache_mb: 512,
    partition_cache_mb: 512,
};

/// How much memory (MB) each storage cache may hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CacheSizes {
    pub sled_cache_mb: u64,
    pub row_cache_mb: u64,
    pub partition_cache_mb: u64,
}

impl CacheSizes {
    /// The default sizes for a process that may use `usable_bytes` of memory.
    pub fn for_memory(usable_bytes: Option<u64>) -> CacheSizes {
        let Some(usable_mb) = usable_bytes.map(|bytes| bytes / MIB) else {
            return UNKNOWN_MEMORY_SIZES;
        };
        let row_and_partition = (usable_mb / ROW_AND_PARTITION_CACHE_SHARE)
            .clamp(SMALLEST_CACHE_MB, ROW_AND_PARTITION_CACHE_MAX_MB);
        CacheSizes {
            sled_cache_mb: (usable_mb / SLED_CACHE_SHARE).max(SMALLEST_CACHE_MB),
            row_cache_mb: row_and_partition,
            partition_cache_mb: row_and_partition,
        }
    }
}

/// Bytes of memory this process may use: the smaller of the machine's memory and every
/// cgroup memory limit above the process; `None` where neither can be read.
pub fn usable_memory() -> Option<u64> {
    let machine = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|text| mem_total(&text));
    let cgroups = std::fs::read_to_string("/proc/self/cgroup")
        .ok()
        .and_then(|text| smallest_limit(&limit_files(Path::new("/sys/fs/cgroup"), &text)));
    [machine, cgroups].into_iter().flatten().min()
}

/// `MemTotal` of `/proc/meminfo`, in bytes.
fn mem_total(meminfo: &str) -> Option<u64> {
    let line = meminfo.lines().find(|line| line.starts_with("MemTotal:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    kib.checked_mul(1024)
}

/// The files that may hold a memory limit for the process whose `/proc/self/cgroup` is
/// `proc_self_cgroup`, with the cgroup file systems mounted under `root`: its own cgroup's
/// and every ancestor's (a parent's limit binds the children too), for cgroup v2
/// (`memory.max`) and v1 (`memory.limit_in_bytes` under the `memory` controller). Inside
/// a container the process's path is often not mounted and its cgroup is the root of
/// the mount; the root's file is always a candidate for that reason.
fn limit_files(root: &Path, proc_self_cgroup: &str) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for line in proc_self_cgroup.lines() {
        let mut fields = line.splitn(3, ':');
        let (Some(_id), Some(controllers), Some(path)) =
            (fields.next(), fields.next(), fields.next())
        else {
            continue;
        };
        let (mount, file) = if controllers.is_empty() {
            (root.to_path_buf(), "memory.max")
        } else if controllers.split(',').any(|name| name == "memory") {
            (root.join("memory"), "memory.limit_in_bytes")
        } else {
            continue;
        };
        let mut dir = mount.join(path.trim_start_matches('/'));
        loop {
            files.push(dir.join(file));
            if dir == mount || !dir.pop() {
                break;
            }
        }
    }
    files
}

/// The smallest limit the files hold; "max" and unreadable files set none.
fn smallest_limit(files: &[PathBuf]) -> Option<u64> {
    files
        .iter()
        .filter_map(|file| std::fs::read_to_string(file).ok())
        .filter_map(|text| text.trim().parse::<u64>().ok())
        .min()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn caches_are_shares_of_memory_within_bounds() {
        let gib = 1024 * MIB;
        assert_eq!(
            CacheSizes::for_memory(Some(24 * gib)),
            CacheSizes {
                sled_cache_mb: 6144,
                row_cache_mb: 512,
                partition_cache_mb: 512
            }
        );
        assert_eq!(
            CacheSizes::for_memory(Some(2 * gib)),
            CacheSizes {
                sled_cache_mb: 512,
                row_cache_mb: 128,
                partition_cache_mb: 128
            },
            "a small container keeps its caches well inside its limit"
        );
        assert_eq!(
            CacheSizes::for_memory(Some(64 * MIB)),
            CacheSizes {
                sled_cache_mb: 16,
                row_cache_mb: 16,
                partition_cache_mb: 16
            }
        );
        assert_eq!(CacheSizes::for_memory(None), UNKNOWN_MEMORY_SIZES);
    }

    #[test]
    fn mem_total_is_read_in_bytes() {
        let meminfo = "MemTotal:       24684084 kB\nMemFree:        23000000 kB\n";
        assert_eq!(mem_total(meminfo), Some(24_684_084 * 1024));
        assert_eq!(mem_total("MemFree: 1 kB\n"), None);
    }

    #[test]
    fn limit_files_cover_the_cgroup_and_its_ancestors_in_v1_and_v2() {
        let root = Path::new("/cg");
        let v1 = "9:name=systemd:/\n4:memory:/box/job\n1:cpu,cpuacct:/\n";
        assert_eq!(
            limit_files(root, v1),
            [
                "/cg/memory/box/job/memory.limit_in_bytes",
                "/cg/memory/box/memory.limit_in_bytes",
                "/cg/memory/memory.limit_in_bytes",
            ]
            .map(PathBuf::from)
        );
        assert_eq!(
            limit_files(root, "0::/user.slice/app.scope\n"),
            [
                "/cg/user.slice/app.scope/memory.max",
                "/cg/user.slice/memory.max",
                "/cg/memory.max",
            ]
            .map(PathBuf::from)
        );
        assert_eq!(
            limit_files(root, "0::/\n"),
            [PathBuf::from("/cg/memory.max")]
        );
    }

    #[test]
    fn the_smallest_numeric_limit_wins_and_max_sets_none() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join("box/job")).unwrap();
        std::fs::write(root.join("memory.max"), "max\n").unwrap();
        std::fs::write(root.join("box/memory.max"), "2147483648\n").unwrap();
        std::fs::write(root.join("box/job/memory.max"), "max\n").unwrap();
        let files = limit_files(root, "0::/box/job\n");
        assert_eq!(smallest_limit(&files), Some(2_147_483_648));
        std::fs::write(root.join("box/memory.max"), "max\n").unwrap();
        assert_eq!(smallest_limit(&files), None, "no cgroup sets a limit");
    }
}
