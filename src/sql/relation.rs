//! The relations a statement reads: a table (one row per row, newest visible cell of
//! each column) or `versions.<table>` (one row per visible cell version). Both expose
//! columns by name to expression compilation and turn engine rows into SQL rows.

use super::ddl::{object_name, table_name, ROWID};
use super::expr::{fold, Scope};
use super::notices::Notices;
use super::sql_types::{Datum, SqlError, SqlResult, SqlType};
use super::values::{
    coerce_for_output, declared_type, pk_sql_type, pk_to_datum, stored_time_text, value_sql_type,
    value_to_datum,
};
use crate::engine::{Engine, EngineError, RowView, TableMeta, ValueRef};
use crate::sqlstate::SqlState;
use sqlparser::ast::TableFactor;
use std::sync::Arc;

/// The schema holding the versions relations.
pub const VERSIONS_SCHEMA: &str = "versions";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RelationKind {
    Table,
    Versions,
}

/// Where a relation column's value comes from.
#[derive(Debug, Clone, PartialEq)]
pub enum Source {
    Pk(usize),
    Attr(String),
    ColumnName,
    Version,
    ValueType,
    Value,
}

#[derive(Debug, Clone)]
pub struct RelationColumn {
    pub name: String,
    pub ty: SqlType,
    pub source: Source,
    /// Left out of `SELECT *` (the hidden `_rowid`).
    pub hidden: bool,
}

/// A relation and the columns one statement needs from it.
#[derive(Debug, Clone)]
pub struct Relation {
    pub table: Arc<TableMeta>,
    pub kind: RelationKind,
    pub qualifiers: Vec<String>,
    pub columns: Vec<RelationColumn>,
    /// Relation columns the statement reads, in slot order.
    pub needed: Vec<usize>,
}

impl Relation {
    pub fn new(table: Arc<TableMeta>, kind: RelationKind, alias: Option<String>) -> Self {
        let mut columns = Vec::new();
        for name in table.ordered_columns() {
            let (ty, source) = if let Some(i) = table.pk_index(name) {
                (pk_sql_type(table.pk[i].ty), Source::Pk(i))
            } else if let Some(column) = table.column(name) {
                if kind == RelationKind::Versions {
                    continue;
                }
                (value_sql_type(column.ty), Source::Attr(name.to_string()))
            } else {
                continue;
            };
            // A SMALLINT, INTEGER, REAL, DATE or TIMESTAMP column is shown as declared;
            // the engine keeps its values within that width or precision.
            let ty = declared_type(&table, name).unwrap_or(ty);
            columns.push(RelationColumn {
                name: name.to_string(),
                ty,
                source,
                hidden: table.auto_rowid && name == ROWID,
            });
        }
        if kind == RelationKind::Versions {
            for (name, ty, source) in [
                ("column_name", SqlType::Text, Source::ColumnName),
                ("version", SqlType::Int8, Source::Version),
                ("value_type", SqlType::Text, Source::ValueType),
                ("value", SqlType::Text, Source::Value),
            ] {
                columns.push(RelationColumn {
                    name: name.into(),
                    ty,
                    source,
                    hidden: false,
                });
            }
        }
        // An alias hides the table's name, as in PostgreSQL.
        let qualifiers = vec![alias.unwrap_or_else(|| table.name.clone())];
        Relation {
            table,
            kind,
            qualifiers,
            columns,
            needed: Vec::new(),
        }
    }

    /// The slot of relation column `index`, adding it to the needed columns.
    pub fn slot(&mut self, index: usize) -> usize {
        match self.needed.iter().position(|&i| i == index) {
            Some(slot) => slot,
            None => {
                self.needed.push(index);
                self.needed.len() - 1
            }
        }
    }

    pub fn index_of(&self, name: &str) -> Option<usize> {
        self.columns.iter().position(|c| c.name == name)
    }

    /// The table column behind relation column `index`, for RowDescription: the
    /// table's visible columns; none of a versions relation.
    pub fn origin(&self, index: usize) -> Option<super::sql_types::ColumnOrigin> {
        let column = self.columns.get(index)?;
        if self.kind != RelationKind::Table || column.hidden {
            return None;
        }
        // attnum: the column's 1-based place among the visible ones (`attnum`).
        let attnum = self.columns[..index].iter().filter(|c| !c.hidden).count() + 1;
        super::sql_types::ColumnOrigin::of(
            &self.table,
            table_oid(&self.table),
            &column.name,
            i64::try_from(attnum).ok()?,
        )
    }

    /// The table column behind the column in `slot` (see [`Relation::origin`]).
    pub fn slot_origin(&self, slot: usize) -> Option<super::sql_types::ColumnOrigin> {
        self.origin(*self.needed.get(slot)?)
    }

    /// The source of the column in `slot`.
    pub fn slot_source(&self, slot: usize) -> &Source {
        &self.columns[self.needed[slot]].source
    }

    /// Attribute columns the statement reads (for the engine's columns_to_get).
    pub fn needed_attributes(&self) -> Vec<String> {
        self.needed
            .iter()
            .filter_map(|&i| match &self.columns[i].source {
                Source::Attr(name) => Some(name.clone()),
                _ => None,
            })
            .collect()
    }

    /// SQL rows of one engine row, each handed to `emit`: one for a table, one per cell
    /// version for versions. A cell whose stored type cannot be shown losslessly in its
    /// column is NULL, and reported to `notices` with its row and column. The row is a
    /// view, so a range read builds its SQL rows straight from the stored bytes.
    pub fn materialize(
        &self,
        row: &RowView<'_>,
        notices: Option<&Notices>,
        mut emit: impl FnMut(Vec<Datum>),
    ) {
        match self.kind {
            RelationKind::Table => {
                let values = self
                    .needed
                    .iter()
                    .map(|&i| match &self.columns[i].source {
                        Source::Attr(name) => {
                            self.attribute(row, name, self.columns[i].ty, notices)
                        }
                        Source::Pk(k) => self.key(row, *k, self.columns[i].ty),
                        _ => Datum::Null,
                    })
                    .collect();
                emit(values);
            }
            RelationKind::Versions => {
                for cell in row.cells() {
                    let values = self
                        .needed
                        .iter()
                        .map(|&i| match &self.columns[i].source {
                            Source::Pk(k) => self.key(row, *k, self.columns[i].ty),
                            Source::ColumnName => Datum::Text(cell.column.to_owned()),
                            Source::Version => Datum::Int(cell.version),
                            Source::ValueType => Datum::Text(cell.value.value_type().name().into()),
                            Source::Value => Datum::Text(self.value_text(cell.column, cell.value)),
                            Source::Attr(_) => Datum::Null,
                        })
                        .collect();
                    emit(values);
                }
            }
        }
    }

    /// Key column `k` of `row` as a `ty` datum: a date or time key is stored as its
    /// Integer, a uuid as its Binary.
    fn key(&self, row: &RowView<'_>, k: usize, ty: SqlType) -> Datum {
        let datum = row.pk().get(k).map_or(Datum::Null, pk_to_datum);
        match ty.is_distinct_kind() {
            true => coerce_for_output(datum, ty),
            false => datum,
        }
    }

    /// The newest value of attribute `name` in `row` as a `ty` datum (see `materialize`).
    fn attribute(
        &self,
        row: &RowView<'_>,
        name: &str,
        ty: SqlType,
        notices: Option<&Notices>,
    ) -> Datum {
        row.latest(name).map_or(Datum::Null, |cell| {
            let shown = coerce_for_output(value_to_datum(cell.value), ty);
            if shown == Datum::Null {
                if let Some(notices) = notices {
                    notices.push(self.odd_cell_notice(row, name, cell.value, ty));
                }
            }
            shown
        })
    }

    /// Says which cell is shown as NULL and why.
    fn odd_cell_notice(
        &self,
        row: &RowView<'_>,
        column: &str,
        value: ValueRef<'_>,
        ty: SqlType,
    ) -> String {
        let names: Vec<&str> = self.table.pk.iter().map(|c| c.name.as_str()).collect();
        let values: Vec<String> = row.pk().iter().map(|v| v.to_string()).collect();
        format!(
            "column \"{column}\" of table \"{}\" at ({})=({}) holds a {} value that is not \
             a {}; shown as NULL",
            self.table.name,
            names.join(", "),
            values.join(", "),
            value.value_type().name(),
            ty.name()
        )
    }

    /// The PK values of a materialized row, when every PK column is in it.
    pub fn pk_of(&self, values: &[Datum]) -> Option<Vec<Datum>> {
        (0..self.table.pk.len())
            .map(|k| {
                self.needed
                    .iter()
                    .position(|&i| self.columns[i].source == Source::Pk(k))
                    .map(|slot| values[slot].clone())
            })
            .collect()
    }
}

impl Relation {
    /// A cell value as text, the way `versions.<table>.value` shows it: a date, time or
    /// interval in PostgreSQL's text (UTC), as its column shows it.
    fn value_text(&self, column: &str, value: ValueRef<'_>) -> String {
        let declared = declared_type(&self.table, column);
        let temporal = declared.filter(|ty| ty.is_temporal() || *ty == SqlType::Time);
        if let (Some(ty), ValueRef::Integer(i)) = (temporal, value) {
            if let Some(shown) = stored_time_text(i, ty) {
                return shown;
            }
        }
        if let (Some(SqlType::Interval), ValueRef::Binary(bytes)) = (declared, value) {
            if let Some(interval) = crate::sql::pg_interval::Interval::from_binary(bytes) {
                return crate::sql::pg_interval::format(&interval);
            }
        }
        match value {
            ValueRef::Boolean(b) => if b { "true" } else { "false" }.into(),
            other => other.to_string(),
        }
    }
}

/// Resolves column names for expression compilation.
impl Scope for Relation {
    fn column(&mut self, qualifier: Option<&str>, name: &str) -> SqlResult<(usize, SqlType)> {
        if let Some(q) = qualifier {
            if !self.qualifiers.iter().any(|known| known == q) {
                return Err(SqlError::new(
                    SqlState::UndefinedTable,
                    format!("missing FROM-clause entry for table \"{q}\""),
                ));
            }
        }
        let index = self.index_of(name).ok_or_else(|| {
            // PostgreSQL's wording: a qualified name is shown as written, unquoted.
            let message = match qualifier {
                Some(q) => format!("column {q}.{name} does not exist"),
                None => format!("column \"{name}\" does not exist"),
            };
            SqlError::new(SqlState::UndefinedColumn, message)
        })?;
        let ty = self.columns[index].ty;
        Ok((self.slot(index), ty))
    }
}

/// A table's OID, as the catalog and RowDescription show it: the first user OID plus
/// twice the engine id, leaving the odd OID after it for the table's primary-key index
/// (and its constraint).
pub fn table_oid(table: &TableMeta) -> i64 {
    16_384 + 2 * i64::from(table.id)
}

/// `pg_attribute.attnum` of a table's column: its 1-based place among the visible
/// columns, in the order the table declared them.
pub fn attnum(table: &Arc<TableMeta>, column: &str) -> Option<i64> {
    Relation::new(Arc::clone(table), RelationKind::Table, None)
        .columns
        .iter()
        .filter(|c| !c.hidden)
        .position(|c| c.name == column)
        .map(|i| i as i64 + 1)
}

/// How many columns a table shows (the highest `attnum`).
pub fn attribute_count(table: &Arc<TableMeta>) -> i64 {
    Relation::new(Arc::clone(table), RelationKind::Table, None)
        .columns
        .iter()
        .filter(|c| !c.hidden)
        .count() as i64
}

/// Resolves the FROM clause to one relation.
pub fn resolve_relation(
    engine: &Engine,
    instance: &str,
    factor: &TableFactor,
) -> SqlResult<Relation> {
    let TableFactor::Table {
        name,
        alias,
        args: None,
        ..
    } = factor
    else {
        return Err(SqlError::unsupported(
            "only plain tables can be read on the fast path",
        ));
    };
    let alias = alias.as_ref().map(|a| fold(&a.name));
    let (schema, table) = object_name(name)?;
    // A missing table is named as the query wrote it (`public.t`), as PostgreSQL does.
    let missing_as_written = |e: EngineError| match (e, &schema) {
        (EngineError::TableNotFound { name }, Some(schema)) => EngineError::TableNotFound {
            name: format!("{schema}.{name}"),
        },
        (e, _) => e,
    };
    if schema.as_deref() == Some(VERSIONS_SCHEMA) {
        let meta = engine.table(instance, &table).map_err(missing_as_written)?;
        return Ok(Relation::new(meta, RelationKind::Versions, alias));
    }
    let table = table_name(name)?;
    Ok(Relation::new(
        engine.table(instance, &table).map_err(missing_as_written)?,
        RelationKind::Table,
        alias,
    ))
}
