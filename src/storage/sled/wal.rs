//! The sled backend's write-ahead log: what makes a write durable cheaply.
//!
//! sled 0.34 makes a write durable only through `flush()`, which hands its whole IO buffer
//! to an IO thread, waits for `pwrite` plus `sync_file_range`, and still needs our own
//! `fdatasync` after it (see `backend`). That costs about a millisecond a commit. So
//! each applied batch is also appended here, as one checksummed record, and a commit
//! waits only for one `write` and one `fdatasync` of this file, shared by every writer in
//! the group. sled itself is synced only at checkpoints, after which the log files it
//! covers are deleted.
//!
//! sled holds, under the reserved empty key, a sequence number up to which it has every
//! record: multi-key batches store theirs atomically with them, and checkpoints store the
//! newest. After a crash sled comes back as some prefix of its writes; recovery reads that
//! number and replays the records after it, in order. A batch sled kept but the log lost
//! was never acknowledged, and stays whole.
//!
//! Record: payload length (u32 LE), CRC-32 of the payload (u32 LE), payload. Payload:
//! sequence number (u64 LE), then per mutation a tag (0 put, 1 delete), key length (u32
//! LE) and key, and for a put the value length (u32 LE) and value. A torn or corrupt
//! record ends the log: it was never acknowledged.
//!
//! A file is sized ahead of its records (`PREALLOCATE_STEP` at a time) and written in
//! place, as PostgreSQL does with its WAL segments: an `fdatasync` that must also record
//! a new file size writes the inode synchronously, which cost 0.13 ms a sync against
//! 0.09 ms without, measured on ext4 (ARCHITECTURE.md §5.2). The zeros past the last record read as a
//! record of length 0, which ends the file like a torn one.

use crate::storage::Mutation;
use std::fs::{File, OpenOptions};
use std::io::Read;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// The key under which sled holds the sequence number of the last batch it applied.
pub(crate) const SEQUENCE_KEY: &[u8] = b"";

const PUT: u8 = 0;
const DELETE: u8 = 1;

/// One record read back from the log.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Record {
    pub(crate) sequence: u64,
    pub(crate) mutations: Vec<Mutation>,
}

/// Appends `sequence` and `mutations` as one record to `out`.
pub(crate) fn encode_record(sequence: u64, mutations: &[Mutation], out: &mut Vec<u8>) {
    let start = out.len();
    out.extend_from_slice(&[0; 8]);
    out.extend_from_slice(&sequence.to_le_bytes());
    for mutation in mutations {
        let (tag, key, value) = match mutation {
            Mutation::Put(k, v) => (PUT, k, Some(v)),
            Mutation::Delete(k) => (DELETE, k, None),
        };
        out.push(tag);
        out.extend_from_slice(&(key.len() as u32).to_le_bytes());
        out.extend_from_slice(key);
        if let Some(value) = value {
            out.extend_from_slice(&(value.len() as u32).to_le_bytes());
            out.extend_from_slice(value);
        }
    }
    let payload_len = (out.len() - start - 8) as u32;
    let crc = crc32fast::hash(&out[start + 8..]);
    out[start..start + 4].copy_from_slice(&payload_len.to_le_bytes());
    out[start + 4..start + 8].copy_from_slice(&crc.to_le_bytes());
}

/// Reads the records of one log file's bytes, up to the first torn or corrupt one.
pub(crate) fn decode_records(mut bytes: &[u8]) -> Vec<Record> {
    let mut records = Vec::new();
    while let Some(record) = take_record(&mut bytes) {
        records.push(record);
    }
    records
}

fn take_record(bytes: &mut &[u8]) -> Option<Record> {
    let len = u32::from_le_bytes(bytes.get(0..4)?.try_into().ok()?) as usize;
    if len == 0 {
        // The zeroed space a file is sized ahead with; no record is empty (each holds
        // at least its sequence number).
        return None;
    }
    let crc = u32::from_le_bytes(bytes.get(4..8)?.try_into().ok()?);
    let payload = bytes.get(8..8usize.checked_add(len)?)?;
    if crc32fast::hash(payload) != crc {
        return None;
    }
    let record = parse_payload(payload)?;
    *bytes = &bytes[8 + len..];
    Some(record)
}

fn parse_payload(mut p: &[u8]) -> Option<Record> {
    fn take<'a>(p: &mut &'a [u8], n: usize) -> Option<&'a [u8]> {
        let (head, tail) = (p.get(..n)?, p.get(n..)?);
        *p = tail;
        Some(head)
    }
    fn take_len(p: &mut &[u8]) -> Option<usize> {
        Some(u32::from_le_bytes(take(p, 4)?.try_into().ok()?) as usize)
    }
    let sequence = u64::from_le_bytes(take(&mut p, 8)?.try_into().ok()?);
    let mut mutations = Vec::new();
    while !p.is_empty() {
        let tag = take(&mut p, 1)?[0];
        let key_len = take_len(&mut p)?;
        let key = take(&mut p, key_len)?.to_vec();
        mutations.push(match tag {
            PUT => {
                let value_len = take_len(&mut p)?;
                Mutation::Put(key, take(&mut p, value_len)?.to_vec())
            }
            DELETE => Mutation::Delete(key),
            _ => return None,
        });
    }
    Some(Record {
        sequence,
        mutations,
    })
}

/// The log files in `dir`, oldest first, with their numbers.
fn log_files(dir: &Path) -> std::io::Result<Vec<(u64, PathBuf)>> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        let number = path
            .file_name()
            .and_then(|n| n.to_str())
            .and_then(|n| n.strip_suffix(".wal"))
            .and_then(|n| n.parse::<u64>().ok());
        if let Some(number) = number {
            files.push((number, path));
        }
    }
    files.sort();
    Ok(files)
}

fn file_name(dir: &Path, number: u64) -> PathBuf {
    dir.join(format!("{number:020}.wal"))
}

fn sync_dir(dir: &Path) -> std::io::Result<()> {
    File::open(dir)?.sync_all()
}

/// The records of every log file in `dir` after `applied`, in order. A record whose
/// number skips one means records in between are missing: the log is damaged, and
/// replaying past the gap would apply later batches without earlier ones.
pub(crate) fn records_after(dir: &Path, applied: u64) -> std::io::Result<Vec<Record>> {
    let mut out = Vec::new();
    let mut expected = applied + 1;
    for (_, path) in log_files(dir)? {
        let mut bytes = Vec::new();
        File::open(&path)?.read_to_end(&mut bytes)?;
        for record in decode_records(&bytes) {
            if record.sequence < expected {
                continue;
            }
            if record.sequence > expected {
                return Err(std::io::Error::other(format!(
                    "write-ahead log {} skips from record {} to {}",
                    path.display(),
                    expected - 1,
                    record.sequence
                )));
            }
            expected += 1;
            out.push(record);
        }
    }
    Ok(out)
}

/// How far ahead of its records a log file is sized, so that most syncs need not record
/// a new file size.
const PREALLOCATE_STEP: u64 = 4 * 1024 * 1024;

struct CurrentFile {
    number: u64,
    file: File,
    /// Bytes of records written, which is where the next record goes.
    bytes: u64,
    /// The file's size: records, then zeros.
    allocated: u64,
}

impl CurrentFile {
    /// Writes `records` after the ones before, first growing the file by whole steps if
    /// they would not fit.
    fn write(&mut self, records: &[u8]) -> std::io::Result<()> {
        let end = self.bytes + records.len() as u64;
        if end > self.allocated {
            let steps = end.div_ceil(PREALLOCATE_STEP);
            self.allocated = steps * PREALLOCATE_STEP;
            self.file.set_len(self.allocated)?;
        }
        self.file.write_all_at(records, self.bytes)?;
        self.bytes = end;
        Ok(())
    }
}

/// The open log: records waiting to be written, and the file they go to.
pub(crate) struct Wal {
    dir: PathBuf,
    /// Records appended since the last write to the file.
    pending: Mutex<Vec<u8>>,
    /// Only the sync thread writes; the mutex keeps that safe without assuming it.
    current: Mutex<CurrentFile>,
    /// A file this large is due for a checkpoint.
    checkpoint_bytes: u64,
    /// Set by the first failed write or sync. After it the file may end in a torn
    /// record, and whatever followed would be unreadable, so nothing more is written and
    /// no further write is acknowledged (PostgreSQL stops on a failed WAL sync too).
    failed: Mutex<Option<String>>,
}

impl Wal {
    /// Starts a new, empty log file in `dir` after removing the old ones, whose records
    /// sled must already hold durably (the caller has replayed and synced them).
    pub(crate) fn start_fresh(dir: &Path, checkpoint_bytes: u64) -> std::io::Result<Wal> {
        std::fs::create_dir_all(dir)?;
        let old = log_files(dir)?;
        let number = old.last().map_or(1, |(n, _)| n + 1);
        let current = Self::create(dir, number)?;
        for (_, path) in old {
            std::fs::remove_file(path)?;
        }
        sync_dir(dir)?;
        Ok(Wal {
            dir: dir.to_path_buf(),
            pending: Mutex::new(Vec::new()),
            current: Mutex::new(current),
            checkpoint_bytes,
            failed: Mutex::new(None),
        })
    }

    fn create(dir: &Path, number: u64) -> std::io::Result<CurrentFile> {
        let file = OpenOptions::new()
            .create_new(true)
            .write(true)
            .open(file_name(dir, number))?;
        file.set_len(PREALLOCATE_STEP)?;
        Ok(CurrentFile {
            number,
            file,
            bytes: 0,
            allocated: PREALLOCATE_STEP,
        })
    }

    /// Queues a record made by `encode_record` for the next `write_and_sync`. Called
    /// under the backend's write lock, right after its batch is applied, so records queue
    /// in apply order.
    pub(crate) fn append_encoded(&self, record: &[u8]) {
        let mut pending = self.pending.lock().unwrap_or_else(|p| p.into_inner());
        pending.extend_from_slice(record);
    }

    /// Writes every queued record and syncs the file. Returns whether the file has grown
    /// enough to checkpoint.
    pub(crate) fn write_and_sync(&self) -> std::io::Result<bool> {
        let mut failed = self.failed.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(e) = &*failed {
            return Err(std::io::Error::other(format!(
                "the write-ahead log failed earlier ({e}); restart the server"
            )));
        }
        let records = std::mem::take(&mut *self.pending.lock().unwrap_or_else(|p| p.into_inner()));
        let mut current = self.current.lock().unwrap_or_else(|p| p.into_inner());
        let written = if records.is_empty() {
            Ok(())
        } else {
            current.write(&records)
        }
        .and_then(|()| current.file.sync_data());
        if let Err(e) = written {
            *failed = Some(e.to_string());
            return Err(e);
        }
        Ok(current.bytes >= self.checkpoint_bytes)
    }

    /// Switches to a new file; records queued from now on go there. Returns the files
    /// before it, which may be deleted once sled is synced (`remove`).
    pub(crate) fn rotate(&self) -> std::io::Result<Vec<PathBuf>> {
        let mut current = self.current.lock().unwrap_or_else(|p| p.into_inner());
        let next = Self::create(&self.dir, current.number + 1)?;
        sync_dir(&self.dir)?;
        *current = next;
        let number = current.number;
        Ok(log_files(&self.dir)?
            .into_iter()
            .filter(|(n, _)| *n < number)
            .map(|(_, path)| path)
            .collect())
    }

    /// Deletes log files sled no longer needs.
    pub(crate) fn remove(&self, files: Vec<PathBuf>) -> std::io::Result<()> {
        for path in files {
            match std::fs::remove_file(&path) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(e),
            }
        }
        sync_dir(&self.dir)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Vec<Mutation> {
        vec![
            Mutation::Put(b"k1".to_vec(), b"v1".to_vec()),
            Mutation::Delete(b"k2".to_vec()),
            Mutation::Put(Vec::new(), Vec::new()),
        ]
    }

    #[test]
    fn records_round_trip() {
        let mut bytes = Vec::new();
        encode_record(7, &sample(), &mut bytes);
        encode_record(8, &[], &mut bytes);
        let records = decode_records(&bytes);
        assert_eq!(records.len(), 2);
        assert_eq!(records[0].sequence, 7);
        assert_eq!(records[0].mutations, sample());
        assert_eq!(records[1].sequence, 8);
        assert!(records[1].mutations.is_empty());
    }

    #[test]
    fn a_torn_or_corrupt_record_ends_the_log() {
        let mut bytes = Vec::new();
        encode_record(1, &sample(), &mut bytes);
        let first = bytes.len();
        encode_record(2, &sample(), &mut bytes);
        for cut in first..bytes.len() {
            assert_eq!(decode_records(&bytes[..cut]).len(), 1, "cut at {cut}");
        }
        let mut flipped = bytes.clone();
        flipped[first + 12] ^= 0x40;
        assert_eq!(decode_records(&flipped).len(), 1);
        assert_eq!(decode_records(&bytes).len(), 2);
    }

    #[test]
    fn files_are_sized_ahead_and_records_past_a_step_still_read_back() {
        let dir = tempfile::tempdir().unwrap();
        let wal = Wal::start_fresh(dir.path(), u64::MAX).unwrap();
        let file = || log_files(dir.path()).unwrap().pop().unwrap().1;
        assert_eq!(std::fs::metadata(file()).unwrap().len(), PREALLOCATE_STEP);
        let small = |sequence| {
            let mut record = Vec::new();
            encode_record(sequence, &sample(), &mut record);
            record
        };
        wal.append_encoded(&small(1));
        wal.write_and_sync().unwrap();
        assert_eq!(std::fs::metadata(file()).unwrap().len(), PREALLOCATE_STEP);
        // A record larger than a whole step grows the file past it.
        let big_value = vec![7u8; PREALLOCATE_STEP as usize];
        let mut big = Vec::new();
        encode_record(
            2,
            &[Mutation::Put(b"big".to_vec(), big_value.clone())],
            &mut big,
        );
        wal.append_encoded(&big);
        wal.append_encoded(&small(3));
        wal.write_and_sync().unwrap();
        assert_eq!(
            std::fs::metadata(file()).unwrap().len(),
            2 * PREALLOCATE_STEP
        );
        let records = records_after(dir.path(), 0).unwrap();
        let sequences: Vec<u64> = records.iter().map(|r| r.sequence).collect();
        assert_eq!(sequences, vec![1, 2, 3]);
        assert_eq!(
            records[1].mutations,
            vec![Mutation::Put(b"big".to_vec(), big_value)]
        );
    }

    #[test]
    fn replay_starts_after_what_sled_holds_and_refuses_gaps() {
        let dir = tempfile::tempdir().unwrap();
        let wal = Wal::start_fresh(dir.path(), u64::MAX).unwrap();
        let append = |sequence| {
            let mut record = Vec::new();
            encode_record(sequence, &sample(), &mut record);
            wal.append_encoded(&record);
        };
        for sequence in 1..=3 {
            append(sequence);
        }
        wal.write_and_sync().unwrap();
        let old = wal.rotate().unwrap();
        assert_eq!(old.len(), 1);
        append(4);
        wal.write_and_sync().unwrap();
        let after = |n| {
            records_after(dir.path(), n)
                .unwrap()
                .iter()
                .map(|r| r.sequence)
                .collect::<Vec<_>>()
        };
        assert_eq!(after(0), vec![1, 2, 3, 4]);
        assert_eq!(after(2), vec![3, 4]);
        assert_eq!(after(4), Vec::<u64>::new());
        wal.remove(old).unwrap();
        assert_eq!(after(3), vec![4]);
        assert!(
            records_after(dir.path(), 1).is_err(),
            "records 2 and 3 are gone"
        );
    }
}
