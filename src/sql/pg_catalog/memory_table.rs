//! How a catalog relation's rows become a DataFusion table: each relation lists its
//! columns as [`Col`]s and its rows as cells ([`V`]), and [`mem_table`] turns them into
//! a `MemTable` built afresh for every query that names the relation.

use crate::sql::query::UTC;
use datafusion::arrow::array::{
    ArrayRef, BooleanBuilder, Int64Builder, ListBuilder, RecordBatch, StringBuilder,
    StringViewBuilder, TimestampMicrosecondBuilder, UInt32Builder,
};
use datafusion::arrow::datatypes::{DataType, Field, Schema, TimeUnit};
use datafusion::catalog::TableProvider;
use datafusion::datasource::MemTable;
use datafusion::error::Result;
use std::sync::Arc;

/// One cell of a catalog row.
pub enum V {
    I(i64),
    T(String),
    B(bool),
    A(Vec<String>),
    N,
}

/// A text cell.
pub fn t(s: &str) -> V {
    V::T(s.to_string())
}

/// A bigint cell holding a count, saturated at `i64::MAX`.
pub fn count(n: u64) -> V {
    V::I(i64::try_from(n).unwrap_or(i64::MAX))
}

/// A column's kind: `i` bigint, `o` oid (a `V::I` that fits 32 unsigned bits; any
/// other is NULL), `t` text, `n` name (an identifier, as PostgreSQL types
/// `relname`), `b` boolean, `a` text[], `z` timestamptz (a `V::I` of microseconds since
/// the Unix epoch).
pub type Col = (&'static str, char);

/// The integer columns of PostgreSQL's catalog relations that are of type `oid` there
/// (object identifiers, not `regproc` names). A relation's bigint column (`i`) of one of
/// these names is an `oid` column: clients tell the two apart (pgAdmin loads a
/// `bigint` as text and compares OIDs as numbers).
const OID_COLUMNS: &[&str] = &[
    "adrelid",
    "amopfamily",
    "amoplefttype",
    "amopmethod",
    "amopopr",
    "amoprighttype",
    "amopsortfamily",
    "amprocfamily",
    "amproclefttype",
    "amprocrighttype",
    "attcollation",
    "attrelid",
    "atttypid",
    "castfunc",
    "castsource",
    "casttarget",
    "cfgnamespace",
    "cfgowner",
    "cfgparser",
    "classid",
    "classoid",
    "collnamespace",
    "collowner",
    "confrelid",
    "conindid",
    "connamespace",
    "conowner",
    "conparentid",
    "conrelid",
    "contypid",
    "datdba",
    "datid",
    "dattablespace",
    "dbid",
    "defaclnamespace",
    "defaclrole",
    "dictnamespace",
    "dictowner",
    "dicttemplate",
    "enumtypid",
    "ev_class",
    "evtfoid",
    "evtowner",
    "fdwhandler",
    "fdwowner",
    "fdwvalidator",
    "ftrelid",
    "ftserver",
    "indexrelid",
    "indrelid",
    "inhparent",
    "inhrelid",
    "laninline",
    "lanowner",
    "lanplcallfoid",
    "lanvalidator",
    "lomowner",
    "member",
    "objid",
    "objoid",
    "oid",
    "opcfamily",
    "opcintype",
    "opckeytype",
    "opcmethod",
    "opcnamespace",
    "opcowner",
    "opfmethod",
    "opfnamespace",
    "opfowner",
    "oprcom",
    "oprleft",
    "oprnamespace",
    "oprnegate",
    "oprowner",
    "oprresult",
    "oprright",
    "partrelid",
    "pnnspid",
    "pnpubid",
    "polrelid",
    "prolang",
    "pronamespace",
    "proowner",
    "prorettype",
    "prpubid",
    "prrelid",
    "prsnamespace",
    "refclassid",
    "refobjid",
    "relam",
    "relfilenode",
    "relid",
    "relnamespace",
    "reloftype",
    "relowner",
    "relrewrite",
    "reltablespace",
    "reltoastrelid",
    "reltype",
    "rngcollation",
    "rngmultitypid",
    "rngsubopc",
    "rngsubtype",
    "rngtypid",
    "roleid",
    "seqrelid",
    "seqtypid",
    "setdatabase",
    "setrole",
    "spcowner",
    "srvfdw",
    "srvowner",
    "stxrelid",
    "subdbid",
    "subowner",
    "tgconstraint",
    "tgconstrindid",
    "tgconstrrelid",
    "tgfoid",
    "tgparentid",
    "tgrelid",
    "tmplnamespace",
    "trflang",
    "trftype",
    "typarray",
    "typbasetype",
    "typcollation",
    "typelem",
    "typnamespace",
    "typowner",
    "typrelid",
    "umid",
    "umuser",
    "usesysid",
];

/// Column `name`'s kind: `kind`, or `o` for a bigint one PostgreSQL types `oid`.
fn column_kind(name: &str, kind: char) -> char {
    match kind == 'i' && OID_COLUMNS.contains(&name) {
        true => 'o',
        false => kind,
    }
}

/// A table with these columns and rows; a missing or mistyped cell is NULL.
pub fn mem_table(cols: &[Col], rows: Vec<Vec<V>>) -> Result<Arc<dyn TableProvider>> {
    let item = Arc::new(Field::new("item", DataType::Utf8, true));
    let fields: Vec<Field> = cols
        .iter()
        .map(|(name, kind)| {
            let ty = match column_kind(name, *kind) {
                'i' => DataType::Int64,
                'o' => DataType::UInt32,
                'b' => DataType::Boolean,
                'a' => DataType::List(Arc::clone(&item)),
                'n' => DataType::Utf8View,
                'z' => DataType::Timestamp(TimeUnit::Microsecond, Some(UTC.into())),
                _ => DataType::Utf8,
            };
            Field::new(*name, ty, true)
        })
        .collect();
    let schema = Arc::new(Schema::new(fields));
    let mut arrays: Vec<ArrayRef> = Vec::new();
    for (i, (name, kind)) in cols.iter().enumerate() {
        let cells = rows.iter().map(|r| r.get(i).unwrap_or(&V::N));
        arrays.push(match column_kind(name, *kind) {
            'i' => {
                let mut b = Int64Builder::new();
                cells.for_each(|c| b.append_option(if let V::I(v) = c { Some(*v) } else { None }));
                Arc::new(b.finish())
            }
            'o' => {
                let mut b = UInt32Builder::new();
                cells.for_each(|c| {
                    b.append_option(match c {
                        V::I(v) => u32::try_from(*v).ok(),
                        _ => None,
                    })
                });
                Arc::new(b.finish())
            }
            'z' => {
                let mut b = TimestampMicrosecondBuilder::new().with_timezone(UTC);
                cells.for_each(|c| b.append_option(if let V::I(v) = c { Some(*v) } else { None }));
                Arc::new(b.finish())
            }
            'b' => {
                let mut b = BooleanBuilder::new();
                cells.for_each(|c| b.append_option(if let V::B(v) = c { Some(*v) } else { None }));
                Arc::new(b.finish())
            }
            'a' => {
                let mut b = ListBuilder::new(StringBuilder::new()).with_field(Arc::clone(&item));
                for c in cells {
                    match c {
                        V::A(values) => {
                            values.iter().for_each(|v| b.values().append_value(v));
                            b.append(true);
                        }
                        _ => b.append(false),
                    }
                }
                Arc::new(b.finish())
            }
            'n' => {
                let mut b = StringViewBuilder::new();
                cells.for_each(|c| b.append_option(if let V::T(v) = c { Some(v) } else { None }));
                Arc::new(b.finish())
            }
            _ => {
                let mut b = StringBuilder::new();
                cells.for_each(|c| b.append_option(if let V::T(v) = c { Some(v) } else { None }));
                Arc::new(b.finish())
            }
        });
    }
    let batch = RecordBatch::try_new(Arc::clone(&schema), arrays)?;
    Ok(Arc::new(MemTable::try_new(schema, vec![vec![batch]])?))
}
