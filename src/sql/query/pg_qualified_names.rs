//! What `pg_get_expr`, `pg_get_viewdef` and `pg_get_constraintdef` print when schema
//! `public` is not on the session's search path, as pg_dump empties it: the names of
//! public's relations qualified (`nextval('public.s'::regclass)`, `FROM public.book`,
//! `REFERENCES public.author(id)`), as PostgreSQL's
//! deparser qualifies a name the search path would not find. So a dump restores with
//! the empty search path it sets.

use sqlparser::ast::{self, Ident, ObjectNamePart, VisitMut, VisitorMut};
use sqlparser::dialect::PostgreSqlDialect;
use sqlparser::parser::Parser;
use std::collections::HashSet;
use std::ops::ControlFlow;

/// A column default's text, with `nextval('s'::regclass)` naming `public.s`.
pub fn qualified_expression(expression: &str) -> String {
    const CALL: &str = "nextval('";
    let mut out = String::with_capacity(expression.len() + 8);
    let mut rest = expression;
    while let Some(at) = rest.find(CALL) {
        let (before, after) = rest.split_at(at + CALL.len());
        out.push_str(before);
        let name_end = after.find('\'').unwrap_or(after.len());
        let name = &after[..name_end];
        // An unquoted dot qualifies the name already.
        let qualified = name.starts_with('"') && name[1..].contains("\".") || {
            !name.starts_with('"') && name.contains('.')
        };
        if !qualified {
            out.push_str("public.");
        }
        rest = after;
    }
    out.push_str(rest);
    out
}

/// A foreign key's definition with the table it references qualified.
pub fn qualified_references(definition: &str) -> String {
    const REFERENCES: &str = "REFERENCES ";
    let Some(at) = definition.find(REFERENCES) else {
        return definition.to_string();
    };
    let (before, after) = definition.split_at(at + REFERENCES.len());
    let name_end = after.find('(').unwrap_or(after.len());
    let name = &after[..name_end];
    // A dot outside double quotes qualifies the name already.
    let mut quoted = false;
    let qualified = name.chars().any(|c| {
        quoted ^= c == '"';
        c == '.' && !quoted
    });
    match qualified {
        true => definition.to_string(),
        false => format!("{before}public.{after}"),
    }
}

/// A view's definition as `pg_get_viewdef` gives it (` query;`: pg_dump cuts the
/// last character, PostgreSQL's semicolon) with the relations it names in `public`
/// qualified; the text as given if it cannot be read (it always can: pgwide stored
/// the query).
pub fn qualified_view_query(definition: &str) -> String {
    let query = definition.trim().trim_end_matches(';');
    let parsed = Parser::new(&PostgreSqlDialect {})
        .try_with_sql(query)
        .and_then(|mut parser| parser.parse_query());
    let Ok(parsed) = parsed else {
        return definition.to_string();
    };
    let mut statement = ast::Statement::Query(parsed);
    let mut qualify = Qualify {
        ctes: crate::sql::views::cte_names(&mut statement),
    };
    let _ = statement.visit(&mut qualify);
    format!(" {statement};")
}

struct Qualify {
    ctes: HashSet<String>,
}

impl VisitorMut for Qualify {
    type Break = ();

    fn pre_visit_relation(&mut self, name: &mut ast::ObjectName) -> ControlFlow<()> {
        let single = match name.0.as_slice() {
            [ObjectNamePart::Identifier(ident)] => ident.clone(),
            _ => return ControlFlow::Continue(()),
        };
        let folded = crate::sql::expr::fold(&single);
        // Catalog relations resolve in pg_catalog, which is always searched.
        if !self.ctes.contains(&folded) && !folded.starts_with("pg_") {
            name.0
                .insert(0, ObjectNamePart::Identifier(Ident::new("public")));
        }
        ControlFlow::Continue(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sequence_names_in_defaults_are_qualified_once() {
        assert_eq!(
            qualified_expression("nextval('auto_id_seq'::regclass)"),
            "nextval('public.auto_id_seq'::regclass)"
        );
        assert_eq!(
            qualified_expression("nextval('public.s'::regclass)"),
            "nextval('public.s'::regclass)"
        );
        assert_eq!(
            qualified_expression("nextval('\"My.Seq\"'::regclass) + 1"),
            "nextval('public.\"My.Seq\"'::regclass) + 1"
        );
        assert_eq!(qualified_expression("now()"), "now()");
    }

    #[test]
    fn a_referenced_table_is_qualified_once() {
        assert_eq!(
            qualified_references("FOREIGN KEY (a) REFERENCES author(id) ON DELETE CASCADE"),
            "FOREIGN KEY (a) REFERENCES public.author(id) ON DELETE CASCADE"
        );
        assert_eq!(
            qualified_references("FOREIGN KEY (a) REFERENCES \"a.b\"(id)"),
            "FOREIGN KEY (a) REFERENCES public.\"a.b\"(id)"
        );
        assert_eq!(
            qualified_references("FOREIGN KEY (a) REFERENCES public.author(id)"),
            "FOREIGN KEY (a) REFERENCES public.author(id)"
        );
    }

    #[test]
    fn relations_of_a_view_are_qualified_but_not_its_ctes_or_catalogs() {
        assert_eq!(
            qualified_view_query(
                " WITH c AS (SELECT * FROM book WHERE price < 2) SELECT * FROM c JOIN pg_class ON true, public.x;"
            ),
            " WITH c AS (SELECT * FROM public.book WHERE price < 2) SELECT * FROM c JOIN pg_class ON true, public.x;"
        );
    }
}
