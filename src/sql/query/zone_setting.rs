//! The session's `TimeZone` in DataFusion's config, where the functions and rules that
//! depend on it read it (`pg_time_zone`, `pg_time_text`, `pg_datetime_functions`,
//! `pg_time`, `pg_time_series`): they may run on other tasks than the session's, and a
//! plan's config goes wherever the plan does.

use crate::sql::datetime::TimeZone;
use datafusion::common::config::{ConfigEntry, ConfigExtension, ConfigOptions, ExtensionOptions};
use datafusion::error::Result;
use std::any::Any;
use std::sync::{Arc, RwLock};

/// The session's zone in DataFusion's config. The session's own config holds the live
/// cell, which `set` changes; a copy of the config (a query's) keeps the zone it had.
#[derive(Debug, Clone, Default)]
pub struct SessionZone {
    zone: Arc<RwLock<TimeZone>>,
}

impl SessionZone {
    fn get(&self) -> TimeZone {
        *self.zone.read().unwrap_or_else(|p| p.into_inner())
    }
}

impl ExtensionOptions for SessionZone {
    fn as_any(&self) -> &dyn Any {
        self
    }

    fn as_any_mut(&mut self) -> &mut dyn Any {
        self
    }

    fn cloned(&self) -> Box<dyn ExtensionOptions> {
        Box::new(SessionZone {
            zone: Arc::new(RwLock::new(self.get())),
        })
    }

    fn set(&mut self, key: &str, value: &str) -> Result<()> {
        match (key, TimeZone::parse(value)) {
            ("time_zone", Some(zone)) => {
                *self.zone.write().unwrap_or_else(|p| p.into_inner()) = zone;
                Ok(())
            }
            _ => datafusion::common::config_err!("invalid pgwide.{key}: {value}"),
        }
    }

    fn entries(&self) -> Vec<ConfigEntry> {
        vec![ConfigEntry {
            key: "pgwide.time_zone".into(),
            value: Some(format!("{:?}", self.get())),
            description: "the session's TimeZone",
        }]
    }
}

impl ConfigExtension for SessionZone {
    const PREFIX: &'static str = "pgwide";
}

/// The session zone of a plan's config (UTC if it has none).
pub fn zone(config: &ConfigOptions) -> TimeZone {
    config
        .extensions
        .get::<SessionZone>()
        .map(SessionZone::get)
        .unwrap_or_default()
}

/// Makes `zone` the zone of the session whose config is `config`.
pub fn set(config: &ConfigOptions, zone: TimeZone) {
    if let Some(session) = config.extensions.get::<SessionZone>() {
        *session.zone.write().unwrap_or_else(|p| p.into_inner()) = zone;
    }
}
