//! Catalog relations that always exist but are empty in pgwide: it has no range
//! types, views, triggers, policies, inheritance or publications. Clients join
//! them in their introspection queries, so each needs its columns, but never a row.

use super::memory_table::Col;

/// Catalog tables that always exist but are empty in pgwide (no views, triggers,
/// policies, inheritance, publications). Queries that inner-join
/// one are answered with no rows without planning (see `pg_compat`).
pub const EMPTY_TABLES: &[(&str, &[Col])] = &[
    (
        "pg_inherits",
        &[
            ("inhrelid", 'i'),
            ("inhparent", 'i'),
            ("inhseqno", 'i'),
            ("inhdetachpending", 'b'),
        ],
    ),
    (
        "pg_policy",
        &[("oid", 'i'), ("polname", 't'), ("polrelid", 'i')],
    ),
    (
        "pg_range",
        &[
            ("rngtypid", 'i'),
            ("rngsubtype", 'i'),
            ("rngmultitypid", 'i'),
            ("rngcollation", 'i'),
            ("rngsubopc", 'i'),
            ("rngcanonical", 'i'),
            ("rngsubdiff", 'i'),
        ],
    ),
    (
        "pg_trigger",
        &[("oid", 'i'), ("tgrelid", 'i'), ("tgname", 't')],
    ),
    (
        "pg_rewrite",
        &[("oid", 'i'), ("ev_class", 'i'), ("rulename", 't')],
    ),
    (
        "pg_statistic_ext",
        &[("oid", 'i'), ("stxrelid", 'i'), ("stxname", 't')],
    ),
    (
        "pg_publication",
        &[("oid", 'i'), ("pubname", 't'), ("puballtables", 'b')],
    ),
    (
        "pg_publication_rel",
        &[("oid", 'i'), ("prpubid", 'i'), ("prrelid", 'i')],
    ),
    (
        "pg_publication_namespace",
        &[("oid", 'i'), ("pnpubid", 'i'), ("pnnspid", 'i')],
    ),
    (
        "pg_extension",
        &[("oid", 'i'), ("extname", 't'), ("extversion", 't')],
    ),
    (
        "pg_views",
        &[("schemaname", 'n'), ("viewname", 'n'), ("definition", 't')],
    ),
    ("pg_matviews", &[("schemaname", 'n'), ("matviewname", 't')]),
    (
        "pg_auth_members",
        &[
            ("roleid", 'i'),
            ("member", 'i'),
            ("grantor", 'i'),
            ("admin_option", 'b'),
        ],
    ),
    (
        "pg_shdescription",
        &[("objoid", 'i'), ("classoid", 'i'), ("description", 't')],
    ),
    ("pg_foreign_table", &[("ftrelid", 'i'), ("ftserver", 'i')]),
    (
        "pg_partitioned_table",
        &[("partrelid", 'i'), ("partstrat", 't')],
    ),
    (
        "pg_enum",
        &[
            ("oid", 'i'),
            ("enumtypid", 'i'),
            ("enumsortorder", 'i'),
            ("enumlabel", 't'),
        ],
    ),
];
