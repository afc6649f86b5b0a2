//! `pg_notify(channel, payload)`: NOTIFY as a function, so the channel and payload can
//! be computed (`SELECT pg_notify('jobs', id::text) FROM queued`). The notification
//! joins the session's pending ones (`notifications`), sent when its transaction
//! commits; a row that fails the query sends none. Returns PostgreSQL's `void`, an
//! empty value, once per row.

use super::udf::{row_by_row, string};
use crate::sql::notifications::PendingNotifications;
use crate::sql::SqlError;
use datafusion::arrow::datatypes::DataType;
use datafusion::common::ScalarValue;
use datafusion::error::{DataFusionError, Result};
use datafusion::execution::session_state::SessionState;
use datafusion::execution::FunctionRegistry;
use datafusion::logical_expr::{
    ColumnarValue, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl, Signature, Volatility,
};
use std::sync::Arc;

/// Registers `pg_notify` for a session whose pending notifications are `pending`.
pub fn register(state: &mut SessionState, pending: &PendingNotifications) -> Result<()> {
    let notify = PgNotify {
        pending: pending.clone(),
        signature: Signature::exact(vec![DataType::Utf8, DataType::Utf8], Volatility::Volatile),
    };
    state.register_udf(Arc::new(ScalarUDF::new_from_impl(notify)))?;
    Ok(())
}

#[derive(Debug)]
struct PgNotify {
    pending: PendingNotifications,
    signature: Signature,
}

// One per session, all alike: DataFusion compares UDFs by what they compute.
impl PartialEq for PgNotify {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}
impl Eq for PgNotify {}
impl std::hash::Hash for PgNotify {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        "pg_notify".hash(state)
    }
}

impl ScalarUDFImpl for PgNotify {
    fn name(&self) -> &str {
        "pg_notify"
    }
    fn signature(&self) -> &Signature {
        &self.signature
    }
    fn return_type(&self, _: &[DataType]) -> Result<DataType> {
        Ok(DataType::Utf8)
    }
    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        row_by_row(args, &DataType::Utf8, |values| {
            // As in PostgreSQL, a NULL channel is an empty one (22023); a NULL
            // payload is empty.
            let channel = string(values.first()).unwrap_or_default();
            let payload = string(values.get(1)).unwrap_or_default();
            self.pending
                .push(channel, payload)
                .map_err(|e: SqlError| DataFusionError::External(Box::new(e)))?;
            Ok(ScalarValue::Utf8(Some(String::new())))
        })
    }
}
