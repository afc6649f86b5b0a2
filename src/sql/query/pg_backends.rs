//! `pg_backend_pid()`, `pg_cancel_backend(pid)` and `pg_terminate_backend(pid [,
//! timeout])` over the server's connections (`activity`). As in PostgreSQL, a role that
//! is not a superuser may signal only its own connections (42501 otherwise), and a pid
//! that is no connection's gives false. The signals are volatile functions, run when a
//! row asks for them, never folded while planning. `pg_terminate_backend`'s timeout,
//! which would wait for the connection to end, is refused (0A000) unless 0.

use super::named_relation::sql_error;
use super::udf::{int, row_by_row, udf};
use crate::sql::activity::SessionBackend;
use crate::sqlstate::SqlState;
use datafusion::arrow::datatypes::DataType;
use datafusion::common::ScalarValue;
use datafusion::error::Result;
use datafusion::execution::session_state::SessionState;
use datafusion::execution::FunctionRegistry;
use datafusion::logical_expr::{
    ColumnarValue, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl, Signature, TypeSignature,
    Volatility,
};
use std::sync::Arc;

/// Registers the three functions for a session served on `backend` by `user`.
pub fn register(
    state: &mut SessionState,
    backend: Option<&SessionBackend>,
    user: &str,
    superuser: bool,
) -> Result<()> {
    let pid = backend.map(|b| b.pid);
    state.register_udf(Arc::new(udf(
        "pg_backend_pid",
        DataType::Int32,
        Arc::new(move |_| ScalarValue::Int32(pid)),
    )))?;
    for kind in [SignalKind::Cancel, SignalKind::Terminate] {
        let signal = Signal {
            kind,
            backend: backend.cloned(),
            user: user.to_string(),
            superuser,
            // Only pg_terminate_backend takes a second argument, its timeout.
            signature: Signature::one_of(
                match kind {
                    SignalKind::Cancel => vec![TypeSignature::Any(1)],
                    SignalKind::Terminate => vec![TypeSignature::Any(1), TypeSignature::Any(2)],
                },
                Volatility::Volatile,
            ),
        };
        state.register_udf(Arc::new(ScalarUDF::new_from_impl(signal)))?;
    }
    Ok(())
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum SignalKind {
    Cancel,
    Terminate,
}

/// `pg_cancel_backend` or `pg_terminate_backend`.
#[derive(Debug)]
struct Signal {
    kind: SignalKind,
    backend: Option<SessionBackend>,
    user: String,
    superuser: bool,
    signature: Signature,
}

impl PartialEq for Signal {
    fn eq(&self, other: &Self) -> bool {
        self.kind == other.kind
    }
}
impl Eq for Signal {}
impl std::hash::Hash for Signal {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.kind.hash(state)
    }
}

impl ScalarUDFImpl for Signal {
    fn name(&self) -> &str {
        match self.kind {
            SignalKind::Cancel => "pg_cancel_backend",
            SignalKind::Terminate => "pg_terminate_backend",
        }
    }
    fn signature(&self) -> &Signature {
        &self.signature
    }
    fn return_type(&self, _: &[DataType]) -> Result<DataType> {
        Ok(DataType::Boolean)
    }
    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        row_by_row(args, &DataType::Boolean, |values| {
            let Some(pid) = int(values.first()).and_then(|p| i32::try_from(p).ok()) else {
                return Ok(ScalarValue::Boolean(None));
            };
            // PostgreSQL's timeout waits for the connection to end; pgwide signals and
            // returns at once, so a wait it would not keep is refused, not ignored.
            if int(values.get(1)).is_some_and(|timeout| timeout != 0) {
                return Err(sql_error(
                    SqlState::FeatureNotSupported,
                    "pg_terminate_backend with a timeout is not supported: pgwide does not \
                     wait for the connection to end (call it without one)"
                        .to_string(),
                ));
            }
            self.send(pid).map(|sent| ScalarValue::Boolean(Some(sent)))
        })
    }
}

impl Signal {
    /// Signals connection `pid`; false if there is none.
    fn send(&self, pid: i32) -> Result<bool> {
        let Some(backend) = &self.backend else {
            return Ok(false);
        };
        let backends = &backend.backends;
        let Some(target) = backends.list().into_iter().find(|b| b.pid == pid) else {
            return Ok(false);
        };
        if !self.superuser && target.user != self.user {
            return Err(sql_error(
                SqlState::InsufficientPrivilege,
                format!(
                    "permission denied to {} process {pid}: only a superuser or the role \
                     that owns it may",
                    match self.kind {
                        SignalKind::Cancel => "cancel the query of",
                        SignalKind::Terminate => "terminate",
                    }
                ),
            ));
        }
        Ok(match self.kind {
            SignalKind::Cancel => backends.cancel(pid),
            // The caller's own statement is not interrupted: it returns, and the
            // connection ends before the next one.
            SignalKind::Terminate => backends.terminate(pid, pid != backend.pid),
        })
    }
}
