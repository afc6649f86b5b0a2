//! Statements about the session itself: SET, RESET, SHOW, DISCARD ALL and DEALLOCATE
//! (of protocol-level and SQL `PREPARE`d statements alike: the session drops the
//! latter, the server the former).

use super::datetime;
use super::expr::{fold, Params};
use super::session_state::SessionState;
use super::settings::{display_name, parse_as_of, transaction_mode};
use super::sql_types::{Datum, OutputColumn, SqlError, SqlResult, SqlType, StatementResult};
use super::statement_handler::{Claim, StatementHandler};
use crate::sqlstate::SqlState;
use futures::{stream, StreamExt};
use sqlparser::ast::{self, Statement};
use std::sync::Arc;

/// The handler of session statements.
pub(super) struct SessionCommands;

/// A planned session statement.
pub(super) enum SessionCommand {
    Set(Box<ast::Set>),
    Reset(ast::Reset),
    /// `SHOW name`, with `name` as PostgreSQL spells the setting.
    Show(String),
    ShowAll,
    Discard,
    /// `DEALLOCATE name`, or `DEALLOCATE ALL` (`None`).
    Deallocate(Option<String>),
}

impl StatementHandler for SessionCommands {
    type Plan = SessionCommand;

    fn plan(_: &SessionState, statement: Box<Statement>, _: &mut Params) -> Claim<SessionCommand> {
        Claim::Planned(Ok(match *statement {
            Statement::Set(set) => SessionCommand::Set(Box::new(set)),
            Statement::Reset(reset) => SessionCommand::Reset(reset.reset),
            Statement::ShowVariable { variable } => {
                match variable
                    .iter()
                    .map(fold)
                    .collect::<Vec<_>>()
                    .join(".")
                    .as_str()
                {
                    "all" => SessionCommand::ShowAll,
                    // The SQL-standard spellings PostgreSQL accepts.
                    "transaction.isolation.level" => {
                        SessionCommand::Show("transaction_isolation".into())
                    }
                    "time.zone" => SessionCommand::Show("timezone".into()),
                    name => SessionCommand::Show(name.into()),
                }
            }
            Statement::Discard { .. } => SessionCommand::Discard,
            Statement::Deallocate { name, .. } => {
                let all = name.quote_style.is_none() && name.value.eq_ignore_ascii_case("all");
                SessionCommand::Deallocate((!all).then_some(name.value))
            }
            _ => return Claim::NotMine(statement),
        }))
    }

    fn columns(plan: &SessionCommand) -> Arc<Vec<OutputColumn>> {
        match plan {
            SessionCommand::Show(name) => text_columns(&[display_name(&name.to_lowercase())]),
            SessionCommand::ShowAll => text_columns(&["name", "setting"]),
            _ => Arc::new(Vec::new()),
        }
    }

    async fn execute(
        state: &mut SessionState,
        plan: &SessionCommand,
        _: Vec<Datum>,
    ) -> SqlResult<StatementResult> {
        let tag = match plan {
            SessionCommand::Set(set) => {
                let result = match as_of_expression(set) {
                    Some((expr, local)) => set_as_of(state, expr, local).await,
                    None => set_statement(state, set),
                };
                state.sync_query_settings();
                result?;
                match &**set {
                    ast::Set::SingleAssignment { variable, .. }
                        if variable.to_string()
                            == super::statement_parser::set_constraints::SETTING =>
                    {
                        "SET CONSTRAINTS"
                    }
                    _ => "SET",
                }
            }
            SessionCommand::Reset(reset) => {
                match reset {
                    ast::Reset::ALL => state.settings.reset_all(),
                    ast::Reset::ConfigurationParameter(name) => {
                        state.settings.reset(&setting_name(name)?)?
                    }
                }
                state.sync_query_settings();
                "RESET"
            }
            SessionCommand::Show(name) => {
                let value = state.settings.get(name)?;
                return Ok(rows(Self::columns(plan), vec![vec![Datum::Text(value)]]));
            }
            SessionCommand::ShowAll => {
                let all = state.settings.all().into_iter();
                let all = all.map(|(k, v)| vec![Datum::Text(k), Datum::Text(v)]);
                return Ok(rows(Self::columns(plan), all.collect()));
            }
            SessionCommand::Discard => {
                if state.transaction.is_some() {
                    return Err(SqlError::new(
                        SqlState::ActiveSqlTransaction,
                        "DISCARD ALL cannot run inside a transaction block",
                    ));
                }
                state.settings.reset_all();
                state.sync_query_settings();
                // DISCARD ALL includes DEALLOCATE ALL and UNLISTEN *.
                state.deallocations.push(None);
                state.apply_listens(&[super::transaction_block::ListenChange::UnlistenAll]);
                "DISCARD ALL"
            }
            SessionCommand::Deallocate(name) => {
                // Protocol-level statements live in the server; it drops them when it
                // takes these. psycopg sends DEALLOCATE ALL after every rollback.
                state.deallocations.push(name.clone());
                match name {
                    None => "DEALLOCATE ALL",
                    Some(_) => "DEALLOCATE",
                }
            }
        };
        Ok(StatementResult::command(tag))
    }
}

fn text_columns(names: &[&str]) -> Arc<Vec<OutputColumn>> {
    let columns = names.iter().map(|name| OutputColumn {
        name: name.to_string(),
        ty: SqlType::Text,
        origin: None,
    });
    Arc::new(columns.collect())
}

/// SHOW's rows, tagged `SHOW` as PostgreSQL tags them (not `SELECT n`).
fn rows(columns: Arc<Vec<OutputColumn>>, rows: Vec<Vec<Datum>>) -> StatementResult {
    StatementResult::Returning {
        columns,
        rows: stream::iter(rows.into_iter().map(Ok)).boxed(),
        tag: "SHOW".into(),
    }
}

/// `SET CONSTRAINTS` (respelled by `statement_parser::set_constraints` as `mode:names`):
/// the names must be constraints (42704), deferrable ones to be deferred (42809). Nothing else changes:
/// foreign keys are checked at the end of the statement or at COMMIT in a block,
/// whatever the mode (docs/postgresql.md, "Accepted, but different").
fn set_constraints(state: &SessionState, value: &str) -> SqlResult<()> {
    let Some((mode, names)) = value.split_once(':') else {
        return Err(SqlError::syntax("SET CONSTRAINTS takes names and a mode"));
    };
    if names == "ALL" {
        return Ok(());
    }
    let tables = state.engine.tables(&state.instance)?;
    for name in names.split(',') {
        let foreign_key = tables
            .iter()
            .flat_map(|t| t.foreign_keys.iter())
            .find(|fk| fk.name == name);
        let other = tables.iter().any(|t| {
            super::pg_catalog::pkey_name(t) == name
                || t.indexes.iter().any(|i| i.constraint && i.name == name)
        });
        match (foreign_key, other) {
            (Some(fk), _) if fk.deferrable || mode == "IMMEDIATE" => {}
            (None, true) if mode == "IMMEDIATE" => {}
            (Some(_), _) | (None, true) => {
                return Err(SqlError::new(
                    SqlState::WrongObjectType,
                    format!("constraint \"{name}\" is not deferrable"),
                ))
            }
            (None, false) => {
                return Err(SqlError::new(
                    SqlState::UndefinedObject,
                    format!("constraint \"{name}\" does not exist"),
                ))
            }
        }
    }
    Ok(())
}

/// A setting's name as written, `prefix.name` for a custom one.
fn setting_name(name: &ast::ObjectName) -> SqlResult<String> {
    let (prefix, name) = super::ddl::object_name(name)?;
    Ok(match prefix {
        Some(prefix) => format!("{prefix}.{name}"),
        None => name,
    })
}

fn set_statement(state: &mut SessionState, set: &ast::Set) -> SqlResult<()> {
    match set {
        ast::Set::SingleAssignment {
            scope,
            variable,
            values,
            ..
        } => {
            let name = setting_name(variable)?;
            if name == super::statement_parser::set_constraints::SETTING {
                return set_constraints(state, &setting_value(values));
            }
            let is_default = matches!(values.as_slice(), [ast::Expr::Identifier(i)] if i.value.eq_ignore_ascii_case("default"));
            let value = (!is_default).then(|| setting_value(values));
            if let (Some(value), true) = (&value, name.eq_ignore_ascii_case("pgwide.as_of")) {
                parse_as_of(value, &state.settings.time_zone())?;
            }
            if matches!(scope, Some(ast::ContextModifier::Local)) {
                // SET LOCAL: until the transaction ends; outside a block the
                // statement is its own transaction, so only the check remains.
                let in_transaction = state.transaction.is_some();
                state
                    .settings
                    .set_config(&name, value.as_deref(), true, in_transaction)?;
            } else {
                match value {
                    None => state.settings.reset(&name)?,
                    Some(value) => state.settings.set(&name, &value)?,
                }
            }
        }
        ast::Set::SetTimeZone { value, .. } => {
            let zone = time_zone_value(value)?;
            // `SET TIME ZONE LOCAL` and `DEFAULT` return to the default zone.
            if zone.eq_ignore_ascii_case("local") || zone.eq_ignore_ascii_case("default") {
                state.settings.reset("timezone")?
            } else {
                state.settings.set("timezone", &zone)?
            }
        }
        ast::Set::SetNames { charset_name, .. } => {
            state.settings.set("client_encoding", &charset_name.value)?
        }
        ast::Set::SetTransaction {
            modes,
            snapshot,
            session,
        } => {
            if snapshot.is_some() {
                return Err(SqlError::unsupported(
                    "SET TRANSACTION SNAPSHOT is not supported",
                ));
            }
            let snapshot_before = state
                .transaction
                .as_ref()
                .is_some_and(|t| t.snapshot.is_some());
            for mode in modes {
                let (name, value) = transaction_mode(mode);
                if *session {
                    state.settings.set(&format!("default_{name}"), value)?;
                } else {
                    let in_transaction = state.transaction.is_some();
                    state
                        .settings
                        .set_config(name, Some(value), true, in_transaction)?;
                }
            }
            state.check_transaction_modes(snapshot_before)?;
        }
        other => return Err(SqlError::unsupported(format!("{other} is not supported"))),
    }
    Ok(())
}

/// A SET value as PostgreSQL stores it.
/// The zone `SET TIME ZONE` names: a name, or hours east of UTC as a number or an
/// interval (`-5`, `INTERVAL '+05:30' HOUR TO MINUTE`), which PostgreSQL names by the
/// offset (`<-05>+05`).
/// The expression of a `SET [LOCAL] pgwide.as_of = <expression>` that is not a plain
/// value (`now() - interval '10 minutes'`), and whether the SET is LOCAL.
fn as_of_expression(set: &ast::Set) -> Option<(&ast::Expr, bool)> {
    let ast::Set::SingleAssignment {
        scope,
        variable,
        values,
        ..
    } = set
    else {
        return None;
    };
    let [expr] = values.as_slice() else {
        return None;
    };
    let plain = matches!(expr, ast::Expr::Value(_) | ast::Expr::Identifier(_));
    let local = matches!(scope, Some(ast::ContextModifier::Local));
    (!plain && variable.to_string().eq_ignore_ascii_case("pgwide.as_of")).then_some((expr, local))
}

/// `SET pgwide.as_of = <expression>`: the expression is computed once, now, as a
/// SELECT of it would be (so `now()` is the transaction's start), and the setting
/// keeps its value: a timestamp with time zone, or milliseconds.
async fn set_as_of(state: &mut SessionState, expr: &ast::Expr, local: bool) -> SqlResult<()> {
    let sql = format!("SELECT ({expr})::text");
    let query = match super::statement_parser::parse(&sql)?.pop() {
        Some(Statement::Query(query)) => query,
        _ => return Err(SqlError::syntax(format!("not a value: {expr}"))),
    };
    let engine = state.query_engine()?;
    let plan = engine.plan(&query, &[])?;
    let mut rows = engine
        .execute(&plan, Vec::new(), state.read_context()?)
        .await?;
    let value = match rows
        .next()
        .await
        .transpose()?
        .and_then(|row| row.into_iter().next())
    {
        Some(Datum::Text(text)) => text,
        _ => {
            return Err(SqlError::new(
                SqlState::InvalidParameterValue,
                format!("invalid value for parameter \"pgwide.as_of\": {expr} is NULL"),
            ))
        }
    };
    parse_as_of(&value, &state.settings.time_zone())?;
    if local {
        let in_transaction = state.transaction.is_some();
        return state
            .settings
            .set_config("pgwide.as_of", Some(&value), true, in_transaction)
            .map(|_| ());
    }
    state.settings.set("pgwide.as_of", &value)
}

fn time_zone_value(value: &ast::Expr) -> SqlResult<String> {
    let invalid = || {
        SqlError::new(
            SqlState::InvalidParameterValue,
            format!("invalid value for parameter \"TimeZone\": \"{value}\""),
        )
    };
    let east_seconds = match value {
        ast::Expr::Value(v) => match &v.value {
            ast::Value::Number(n, _) => n.parse::<f64>().ok().map(|hours| hours * 3600.0),
            _ => None,
        },
        ast::Expr::UnaryOp {
            op: ast::UnaryOperator::Minus,
            expr,
        } => match expr.as_ref() {
            ast::Expr::Value(v) => match &v.value {
                ast::Value::Number(n, _) => n.parse::<f64>().ok().map(|hours| -hours * 3600.0),
                _ => return Err(invalid()),
            },
            _ => return Err(invalid()),
        },
        ast::Expr::Interval(interval) => {
            let text = match interval.value.as_ref() {
                ast::Expr::Value(v) => match &v.value {
                    ast::Value::SingleQuotedString(s) => s.clone(),
                    _ => return Err(invalid()),
                },
                _ => return Err(invalid()),
            };
            let parsed = super::pg_interval::parse(&text).map_err(|_| invalid())?;
            if parsed.months != 0 || parsed.days != 0 {
                return Err(invalid());
            }
            Some(parsed.micros as f64 / 1e6)
        }
        _ => None,
    };
    match east_seconds {
        None => Ok(setting_value(std::slice::from_ref(value))),
        Some(east) if east.abs() < 15.0 * 3600.0 + 59.0 * 60.0 => {
            Ok(datetime::TimeZone::offset_name(east.round() as i32))
        }
        Some(_) => Err(invalid()),
    }
}

fn setting_value(values: &[ast::Expr]) -> String {
    values
        .iter()
        .map(|v| match v {
            ast::Expr::Value(v) => match &v.value {
                ast::Value::SingleQuotedString(s) => s.clone(),
                other => other.to_string(),
            },
            ast::Expr::Identifier(i) => i.value.clone(),
            other => other.to_string(),
        })
        .collect::<Vec<_>>()
        .join(", ")
}
