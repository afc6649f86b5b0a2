//! pgwide: a Table Store-style wide-column database behind a PostgreSQL wire-protocol
//! gateway. Layers, top to bottom: `server` (wire protocol, sessions), `sql` (parse and
//! plan onto the engine), `engine` (the Table Store model), `storage` (ordered key-value
//! backends).

pub mod auth;
pub mod config;
pub mod engine;
pub mod gateway;
pub mod server;
pub mod sql;
pub mod sqlstate;
pub mod storage;
