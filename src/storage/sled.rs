//! The sled backend, and everything in the storage layer that knows sled. `backend` puts
//! sled behind the `Backend` trait with a write-ahead log of its own (`wal`), group commit
//! (`sync`) and a thread for bulk batches (`apply_thread`); `store` reads sled's loose
//! keys and the packs bulk loads write (`pack`, found through `pack_hints` and
//! `pack_spans`) as one ordered map, and a point read lends the pack it opened to
//! read-around (`opened_pack`).

mod apply_thread;
mod backend;
mod opened_pack;
mod pack;
mod pack_hints;
mod pack_spans;
mod store;
mod sync;
mod wal;

pub use backend::{SledBackend, SledOptions};

// Read-around's tests (`storage/cached/read_around.rs`) offer packs from a store they
// write to directly.
#[cfg(test)]
pub(super) use {opened_pack::OpenedPack, store::Store};
