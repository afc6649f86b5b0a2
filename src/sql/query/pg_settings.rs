//! The session's settings as queries see them: `current_setting(name)` reads them and
//! `set_config(name, value, is_local)` changes them. The session owns the settings;
//! `set_config` checks its change and leaves it for the session to apply when the
//! statement is done (`take_changes`).

use super::udf::{string, text};
use crate::sql::settings;
use crate::sql::sql_types::{SqlError, SqlResult};
use crate::sqlstate::SqlState;
use datafusion::arrow::datatypes::DataType;
use datafusion::common::ScalarValue;
use datafusion::error::{DataFusionError, Result};
use datafusion::logical_expr::{
    ColumnarValue, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl, Signature, Volatility,
};
use std::collections::BTreeMap;
use std::sync::{Arc, RwLock};

/// A change `set_config` made, for the session to apply.
#[derive(Debug, Clone, PartialEq)]
pub struct ConfigChange {
    /// Lower case.
    pub name: String,
    /// `None`: back to the default.
    pub value: Option<String>,
    /// Until the end of the transaction (SET LOCAL) rather than the session (SET).
    pub local: bool,
}

#[derive(Debug, Default)]
struct State {
    /// By lower-case name, as SHOW shows them.
    values: BTreeMap<String, String>,
    defaults: BTreeMap<String, String>,
    changes: Vec<ConfigChange>,
}

/// A session's settings shared with its query functions: they read them when a
/// statement runs, so a cached plan sees a later SET too.
#[derive(Debug, Clone, Default)]
pub struct SharedSettings(Arc<RwLock<State>>);

impl SharedSettings {
    /// The session's values and defaults, after it changed them.
    pub fn replace(&self, values: Vec<(String, String)>, defaults: Vec<(String, String)>) {
        let lower = |pairs: Vec<(String, String)>| {
            pairs
                .into_iter()
                .map(|(k, v)| (k.to_lowercase(), v))
                .collect()
        };
        let mut state = self.0.write().unwrap_or_else(|e| e.into_inner());
        state.values = lower(values);
        state.defaults = lower(defaults);
    }

    pub fn get(&self, name: &str) -> Option<String> {
        let state = self.0.read().unwrap_or_else(|e| e.into_inner());
        state.values.get(&name.to_lowercase()).cloned()
    }

    /// The changes `set_config` made since the last call, oldest first.
    pub fn take_changes(&self) -> Vec<ConfigChange> {
        let mut state = self.0.write().unwrap_or_else(|e| e.into_inner());
        std::mem::take(&mut state.changes)
    }

    /// `set_config`: checks the change as SET would, records it and returns the new
    /// value as SHOW shows it.
    fn set_config(&self, name: &str, value: Option<&str>, local: bool) -> SqlResult<String> {
        let name = name.to_lowercase();
        let mut state = self.0.write().unwrap_or_else(|e| e.into_inner());
        let known = state.values.contains_key(&name) || name.contains('.');
        let value_or_default = match value {
            Some(value) => value.to_string(),
            None => state.defaults.get(&name).cloned().unwrap_or_default(),
        };
        let shown = settings::check(&name, &value_or_default, known)?;
        if name == "pgwide.as_of" && !shown.is_empty() {
            // Only checked here: the session reads it in its own zone.
            crate::sql::settings::parse_as_of(&shown, &Default::default())?;
        }
        state.values.insert(name.clone(), shown.clone());
        state.changes.push(ConfigChange {
            name,
            value: value.map(String::from),
            local,
        });
        Ok(shown)
    }
}

/// `set_config(name, value, is_local)`. Volatile, so the optimizer never runs it ahead
/// of the statement (at Parse) or folds several calls into one.
#[derive(Debug)]
struct SetConfig {
    settings: SharedSettings,
    signature: Signature,
}

impl PartialEq for SetConfig {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}
impl Eq for SetConfig {}
impl std::hash::Hash for SetConfig {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        "set_config".hash(state)
    }
}

impl SetConfig {
    fn call(&self, args: &[ScalarValue]) -> SqlResult<ScalarValue> {
        let name = string(args.first()).ok_or_else(|| {
            if args.first().is_some_and(|a| !a.is_null()) {
                SqlError::undefined_function("set_config takes text, text, boolean")
            } else {
                SqlError::new(SqlState::NullValueNotAllowed, "SET requires parameter name")
            }
        })?;
        let value = match args.get(1) {
            Some(v) if v.is_null() => None,
            v => Some(string(v).ok_or_else(|| {
                SqlError::undefined_function("set_config takes text, text, boolean")
            })?),
        };
        let local = match args.get(2) {
            Some(ScalarValue::Boolean(b)) => b.unwrap_or(false),
            Some(v) if v.is_null() => false,
            _ => {
                return Err(SqlError::undefined_function(
                    "set_config takes text, text, boolean",
                ))
            }
        };
        Ok(text(Some(self.settings.set_config(name, value, local)?)))
    }
}

impl ScalarUDFImpl for SetConfig {
    fn name(&self) -> &str {
        "set_config"
    }
    fn signature(&self) -> &Signature {
        &self.signature
    }
    fn return_type(&self, _: &[DataType]) -> Result<DataType> {
        Ok(DataType::Utf8)
    }
    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        super::udf::row_by_row(args, &DataType::Utf8, |values| {
            self.call(values)
                .map_err(|e| DataFusionError::External(Box::new(e)))
        })
    }
}

/// The `current_setting` and `set_config` functions over `settings`.
pub fn functions(settings: SharedSettings) -> Vec<ScalarUDF> {
    let read = settings.clone();
    vec![
        // Stable, so it folds to a constant where one is needed (Grafana passes it to
        // generate_series); it therefore shows the value from the statement's start.
        super::udf::udf(
            "current_setting",
            DataType::Utf8,
            Arc::new(move |a| text(string(a.first()).and_then(|n| read.get(n)))),
        ),
        ScalarUDF::new_from_impl(SetConfig {
            settings,
            signature: Signature::any(3, Volatility::Volatile),
        }),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shared() -> SharedSettings {
        let settings = SharedSettings::default();
        settings.replace(
            vec![
                ("statement_timeout".into(), "0".into()),
                ("DateStyle".into(), "ISO, MDY".into()),
            ],
            vec![("statement_timeout".into(), "0".into())],
        );
        settings
    }

    #[test]
    fn set_config_checks_like_set_and_records_the_change() {
        let s = shared();
        assert_eq!(
            s.set_config("Statement_Timeout", Some("1500"), false),
            Ok("1500ms".to_string())
        );
        assert_eq!(s.get("statement_timeout").as_deref(), Some("1500ms"));
        assert_eq!(s.get("datestyle").as_deref(), Some("ISO, MDY"));
        assert_eq!(
            s.set_config("statement_timeout", None, true),
            Ok("0".into())
        );
        assert_eq!(
            s.set_config("nope", Some("1"), false).unwrap_err().code(),
            "42704"
        );
        assert_eq!(
            s.set_config("statement_timeout", Some("abc"), false)
                .unwrap_err()
                .code(),
            "22023"
        );
        assert_eq!(
            s.take_changes(),
            vec![
                ConfigChange {
                    name: "statement_timeout".into(),
                    value: Some("1500".into()),
                    local: false
                },
                ConfigChange {
                    name: "statement_timeout".into(),
                    value: None,
                    local: true
                },
            ]
        );
        assert!(s.take_changes().is_empty());
    }
}
