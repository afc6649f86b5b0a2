// pgjdbc (Debian's libpostgresql-jdbc-java) against pgwide, run by tests/client_jdbc.rs.
// The Rust test creates `items` (id BIGINT PK, every supported type as attributes),
// `pairs` ((a TEXT, b BIGINT) PK, v TEXT) and `quad` (a 4-column PK declared in another
// order than its columns) first. Every check throws on a mismatch, so the program exits
// non-zero; each passing check prints a line starting with "ok ".

import java.sql.*;
import java.util.*;

public class Client {
    static int checks = 0;

    static void check(boolean cond, String what) {
        if (!cond) throw new AssertionError(what);
        checks++;
        System.out.println("ok " + what);
    }

    public static void main(String[] args) throws Exception {
        String url = "jdbc:postgresql://" + System.getenv("PGHOST") + ":" + System.getenv("PGPORT")
                + "/postgres";
        Properties props = new Properties();
        props.setProperty("user", "postgres");
        // Both extended-protocol modes of the driver: default (unnamed statements, then
        // named server-side ones after prepareThreshold=5 runs) and server-side from the
        // first run; then preferQueryMode=simple, where the driver writes parameters
        // into the SQL text (see simpleMode).
        String[][] modes = {
            {"default", null, null},
            {"prepareThreshold=1", "1", null},
        };
        long base = 0;
        for (String[] mode : modes) {
            Properties p = (Properties) props.clone();
            if (mode[1] != null) p.setProperty("prepareThreshold", mode[1]);
            if (mode[2] != null) p.setProperty("preferQueryMode", mode[2]);
            try (Connection conn = DriverManager.getConnection(url, p)) {
                System.out.println("mode " + mode[0]);
                if (base == 0) metadata(conn);
                if (base == 0) foreignKeys(conn);
                if (base == 0) sessionZone(conn);
                types(conn, base, mode[0]);
                batch(conn, base, mode[0]);
                transactions(conn, base, mode[0]);
                arrays(conn, base, mode[0]);
                datesUuidsAndKeys(conn, mode[0]);
                decimalsAndDefaults(conn, mode[0]);
            }
            base += 1000;
        }
        Properties simple = (Properties) props.clone();
        simple.setProperty("preferQueryMode", "simple");
        try (Connection conn = DriverManager.getConnection(url, simple)) {
            System.out.println("mode simple");
            simpleMode(conn, base);
            batch(conn, base, "simple");
            transactions(conn, base, "simple");
        }
        System.out.println("checks " + checks);
        System.out.println("ALL JDBC CHECKS PASSED");
    }

    /** The driver sends the JVM's zone at startup: the server reads and shows in it. */
    static void sessionZone(Connection conn) throws SQLException {
        String jvm = TimeZone.getDefault().getID();
        try (Statement st = conn.createStatement();
             ResultSet rs = st.executeQuery("SHOW TimeZone")) {
            check(rs.next() && rs.getString(1).equalsIgnoreCase(jvm),
                    "the session zone is the JVM's " + jvm);
        }
        java.time.Instant noon = java.time.Instant.parse("2024-07-01T12:00:00Z");
        String shown = java.time.format.DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm:ssx")
                .format(noon.atZone(TimeZone.getDefault().toZoneId()));
        try (PreparedStatement ps = conn.prepareStatement(
                "SELECT CAST(? AS timestamptz)::text, timestamp '2024-07-01 12:00'::timestamptz")) {
            ps.setObject(1, noon.atOffset(java.time.ZoneOffset.UTC));
            try (ResultSet rs = ps.executeQuery()) {
                check(rs.next() && rs.getString(1).equals(shown),
                        "a timestamptz is shown in the session zone: " + rs.getString(1));
                java.time.Instant named = java.time.LocalDateTime.of(2024, 7, 1, 12, 0)
                        .atZone(TimeZone.getDefault().toZoneId()).toInstant();
                java.time.OffsetDateTime read = rs.getObject(2, java.time.OffsetDateTime.class);
                check(read.toInstant().equals(named), "a timestamp becomes the zone's instant " + read);
            }
        }
    }

    /** setArray and getArray: `= ANY(?)` with a java.sql.Array, and arrays in results. */
    /** java.time values, a UUID and a generated key, as an application writes them. */
    static void datesUuidsAndKeys(Connection conn, String mode) throws SQLException {
        try (Statement st = conn.createStatement()) {
            st.execute("CREATE TABLE events_jdbc (id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY, "
                    + "token UUID NOT NULL, at TIMESTAMPTZ NOT NULL, day DATE, local TIMESTAMP)");
        }
        java.util.UUID token = java.util.UUID.fromString("a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11");
        java.time.OffsetDateTime at = java.time.OffsetDateTime.of(2024, 3, 1, 10, 0, 5, 123_000_000,
                java.time.ZoneOffset.ofHours(2));
        java.time.LocalDate day = java.time.LocalDate.of(1969, 7, 20);
        java.time.LocalDateTime local = java.time.LocalDateTime.of(1, 1, 1, 0, 0, 2);
        long id;
        try (PreparedStatement ps = conn.prepareStatement(
                "INSERT INTO events_jdbc (token, at, day, local) VALUES (?, ?, ?, ?)",
                Statement.RETURN_GENERATED_KEYS)) {
            ps.setObject(1, token);
            ps.setObject(2, at);
            ps.setObject(3, day);
            ps.setObject(4, local);
            check(ps.executeUpdate() == 1, mode + " insert of java.time values and a UUID");
            try (ResultSet keys = ps.getGeneratedKeys()) {
                check(keys.next(), mode + " getGeneratedKeys has a row");
                id = keys.getLong("id");
                check(id == 1, mode + " generated key " + id);
            }
        }
        try (PreparedStatement ps = conn.prepareStatement(
                "SELECT token, at, day, local FROM events_jdbc WHERE id = ? AND at >= ?")) {
            ps.setLong(1, id);
            ps.setObject(2, at.minusSeconds(1));
            try (ResultSet rs = ps.executeQuery()) {
                check(rs.next(), mode + " row by key and timestamptz bound");
                check(rs.getObject(1, java.util.UUID.class).equals(token), mode + " UUID round trip");
                java.time.OffsetDateTime back = rs.getObject(2, java.time.OffsetDateTime.class);
                check(back.isEqual(at), mode + " timestamptz round trip " + back);
                check(rs.getObject(3, java.time.LocalDate.class).equals(day), mode + " date round trip");
                check(rs.getObject(4, java.time.LocalDateTime.class).equals(local),
                        mode + " timestamp round trip " + rs.getObject(4, java.time.LocalDateTime.class));
            }
        }
        try (PreparedStatement ps = conn.prepareStatement("INSERT INTO events_jdbc (id, token, at) VALUES (?, ?, now())")) {
            ps.setLong(1, 9);
            ps.setObject(2, token);
            ps.executeUpdate();
            check(false, mode + " a value for a GENERATED ALWAYS key is refused");
        } catch (SQLException e) {
            check("428C9".equals(e.getSQLState()), mode + " GENERATED ALWAYS refuses a value: " + e.getSQLState());
        }
        try (Statement st = conn.createStatement()) {
            st.execute("DROP TABLE events_jdbc");
        }
    }

    /** BigDecimal in and out of a NUMERIC(p,s) column, exact sums, and a column DEFAULT. */
    static void decimalsAndDefaults(Connection conn, String mode) throws SQLException {
        try (Statement st = conn.createStatement()) {
            st.execute("CREATE TABLE prices_jdbc (id BIGINT PRIMARY KEY, amount NUMERIC(12,2) NOT NULL, "
                    + "currency TEXT NOT NULL DEFAULT 'EUR')");
        }
        try (PreparedStatement ps = conn.prepareStatement("INSERT INTO prices_jdbc (id, amount) VALUES (?, ?)")) {
            ps.setLong(1, 1);
            ps.setBigDecimal(2, new java.math.BigDecimal("19.995"));
            ps.executeUpdate();
            ps.setLong(1, 2);
            ps.setBigDecimal(2, new java.math.BigDecimal("-0.1"));
            ps.executeUpdate();
        }
        try (PreparedStatement ps = conn.prepareStatement(
                "SELECT amount, currency, 0.1 + 0.2 FROM prices_jdbc WHERE id = ?")) {
            ps.setLong(1, 1);
            try (ResultSet rs = ps.executeQuery()) {
                check(rs.next(), mode + " numeric row");
                check(rs.getBigDecimal(1).equals(new java.math.BigDecimal("20.00")),
                        mode + " numeric(12,2) rounds half away from zero: " + rs.getBigDecimal(1));
                check("EUR".equals(rs.getString(2)), mode + " DEFAULT fills an omitted column");
                check(rs.getBigDecimal(3).equals(new java.math.BigDecimal("0.3")),
                        mode + " decimal literals are exact: " + rs.getBigDecimal(3));
                check(rs.getMetaData().getColumnType(1) == java.sql.Types.NUMERIC
                        && rs.getMetaData().getPrecision(1) == 12 && rs.getMetaData().getScale(1) == 2,
                        mode + " NUMERIC(12,2) metadata");
            }
        }
        try (PreparedStatement ps = conn.prepareStatement("SELECT amount FROM prices_jdbc WHERE amount = ?")) {
            ps.setBigDecimal(1, new java.math.BigDecimal("-0.10"));
            try (ResultSet rs = ps.executeQuery()) {
                check(rs.next() && rs.getBigDecimal(1).equals(new java.math.BigDecimal("-0.10")),
                        mode + " a BigDecimal parameter compares by value");
            }
        }
        try (Statement st = conn.createStatement()) {
            st.execute("DROP TABLE prices_jdbc");
        }
    }

    static void arrays(Connection conn, long base, String mode) throws SQLException {
        try (PreparedStatement ins = conn.prepareStatement("INSERT INTO pairs (a, b, v) VALUES (?, ?, ?)")) {
            for (long b = 1; b <= 4; b++) {
                ins.setString(1, "arr-" + mode);
                ins.setLong(2, base + b);
                ins.setString(3, "v" + b);
                ins.executeUpdate();
            }
        }
        try (PreparedStatement ps = conn.prepareStatement(
                "SELECT b FROM pairs WHERE a = ? AND b = ANY(?) ORDER BY b")) {
            for (int run = 0; run < 3; run++) {
                ps.setString(1, "arr-" + mode);
                ps.setArray(2, conn.createArrayOf("bigint", new Long[] {base + 1, base + 3, base + 99}));
                List<Long> got = new ArrayList<>();
                try (ResultSet rs = ps.executeQuery()) {
                    while (rs.next()) got.add(rs.getLong(1));
                }
                check(got.equals(List.of(base + 1, base + 3)), mode + " setArray(bigint) = ANY(?) run " + run + ": " + got);
            }
        }
        try (PreparedStatement ps = conn.prepareStatement(
                "SELECT ARRAY(SELECT v FROM pairs WHERE a = ? ORDER BY b DESC), ?::text[]")) {
            ps.setString(1, "arr-" + mode);
            ps.setArray(2, conn.createArrayOf("text", new String[] {"x", "y z", null}));
            try (ResultSet rs = ps.executeQuery()) {
                check(rs.next(), mode + " array row");
                Object[] values = (Object[]) rs.getArray(1).getArray();
                check(Arrays.equals(values, new String[] {"v4", "v3", "v2", "v1"}), mode + " ARRAY(SELECT) getArray " + Arrays.toString(values));
                Object[] echoed = (Object[]) rs.getArray(2).getArray();
                check(Arrays.equals(echoed, new String[] {"x", "y z", null}), mode + " text[] parameter round trip " + Arrays.toString(echoed));
            }
        }
    }

    static void metadata(Connection conn) throws SQLException {
        DatabaseMetaData md = conn.getMetaData();
        check(md.getDatabaseProductName().equals("PostgreSQL"), "product name");
        check(md.getDatabaseMajorVersion() >= 14, "server major version " + md.getDatabaseMajorVersion());
        List<String> tables = new ArrayList<>();
        try (ResultSet rs = md.getTables(null, "public", "%", new String[] {"TABLE"})) {
            while (rs.next()) {
                check(rs.getString("TABLE_TYPE").equals("TABLE"), "table type of " + rs.getString("TABLE_NAME"));
                check(rs.getString("TABLE_SCHEM").equals("public"), "table schema");
                tables.add(rs.getString("TABLE_NAME"));
            }
        }
        Collections.sort(tables);
        check(tables.equals(List.of("items", "pairs", "quad")), "getTables " + tables);
        // A view is listed apart from the tables, as pgjdbc maps relkind 'v'.
        try (Statement st = conn.createStatement()) {
            st.execute("CREATE VIEW item_names AS SELECT id FROM items");
        }
        List<String> views = new ArrayList<>();
        try (ResultSet rs = md.getTables(null, "public", "%", new String[] {"VIEW"})) {
            while (rs.next()) views.add(rs.getString("TABLE_NAME") + ":" + rs.getString("TABLE_TYPE"));
        }
        check(views.equals(List.of("item_names:VIEW")), "getTables VIEW " + views);
        try (Statement st = conn.createStatement()) {
            st.execute("DROP VIEW item_names");
        }
        List<String> schemas = new ArrayList<>();
        try (ResultSet rs = md.getSchemas()) {
            while (rs.next()) schemas.add(rs.getString("TABLE_SCHEM"));
        }
        check(schemas.contains("public") && schemas.contains("pg_catalog"), "getSchemas " + schemas);
        List<String> cols = new ArrayList<>();
        try (ResultSet rs = md.getColumns(null, "public", "items", "%")) {
            while (rs.next()) {
                cols.add(rs.getString("COLUMN_NAME") + ":" + rs.getString("TYPE_NAME") + ":"
                        + rs.getInt("DATA_TYPE") + ":" + rs.getInt("ORDINAL_POSITION") + ":"
                        + rs.getString("IS_NULLABLE"));
            }
        }
        List<String> want = List.of(
                "id:int8:" + Types.BIGINT + ":1:NO",
                "b:bool:" + Types.BIT + ":2:YES",
                // SMALLINT, INTEGER and REAL keep their declared types.
                "i2:int2:" + Types.SMALLINT + ":3:YES",
                "i4:int4:" + Types.INTEGER + ":4:YES",
                "i8:int8:" + Types.BIGINT + ":5:YES",
                "f4:float4:" + Types.REAL + ":6:YES",
                "f8:float8:" + Types.DOUBLE + ":7:YES",
                "t:text:" + Types.VARCHAR + ":8:YES",
                "bin:bytea:" + Types.BINARY + ":9:YES");
        check(cols.equals(want), "getColumns " + cols);
        check(primaryKeys(md, "items").equals(List.of("id:1:items_pkey")), "getPrimaryKeys items " + primaryKeys(md, "items"));
        // quad's key is (c, a, d, b): KEY_SEQ follows the key, not the column order.
        List<String> quad = primaryKeys(md, "quad");
        check(quad.equals(List.of("c:1:quad_pkey", "a:2:quad_pkey", "d:3:quad_pkey", "b:4:quad_pkey")), "getPrimaryKeys quad " + quad);
        check(primaryKeys(md, "no_such_table").isEmpty(), "getPrimaryKeys of a missing table");
        List<String> index = new ArrayList<>();
        try (ResultSet rs = md.getIndexInfo(null, "public", "quad", false, false)) {
            while (rs.next()) {
                index.add(rs.getString("INDEX_NAME") + ":" + rs.getBoolean("NON_UNIQUE") + ":"
                        + rs.getInt("ORDINAL_POSITION") + ":" + rs.getString("COLUMN_NAME") + ":"
                        + rs.getString("ASC_OR_DESC"));
            }
        }
        check(index.equals(List.of("quad_pkey:false:1:c:A", "quad_pkey:false:2:a:A", "quad_pkey:false:3:d:A",
                "quad_pkey:false:4:b:A")), "getIndexInfo quad " + index);
        try (ResultSet rs = md.getIndexInfo(null, "public", "items", true, false)) {
            check(rs.next() && rs.getString("INDEX_NAME").equals("items_pkey") && rs.getString("COLUMN_NAME").equals("id")
                    && !rs.next(), "getIndexInfo items (unique only)");
        }
        // PostgreSQL's keywords that are not SQL:2003 ones (pgjdbc filters the standard list).
        List<String> keywords = Arrays.asList(md.getSQLKeywords().split(","));
        check(keywords.contains("analyse") && keywords.contains("ilike") && !keywords.contains("select")
                && !keywords.contains("table"), "getSQLKeywords " + keywords.size());
        Map<String, Integer> types = new HashMap<>();
        try (ResultSet rs = md.getTypeInfo()) {
            while (rs.next()) types.put(rs.getString("TYPE_NAME"), rs.getInt("DATA_TYPE"));
        }
        check(types.get("int8") == Types.BIGINT && types.get("text") == Types.VARCHAR
                && types.get("bytea") == Types.BINARY && types.get("bool") == Types.BIT
                && types.get("float8") == Types.DOUBLE, "getTypeInfo " + types);
    }

    // COLUMN_NAME:KEY_SEQ:PK_NAME of each primary-key column, in the driver's order.
    /** The DDL Hibernate's schema update emits for a @ManyToOne, and the foreign keys
     *  the driver reads back as Hibernate does (getImportedKeys, getExportedKeys). */
    static void foreignKeys(Connection conn) throws SQLException {
        try (Statement st = conn.createStatement()) {
            st.execute("create table fk_parent (id bigint not null, code varchar(20), primary key (id))");
            st.execute("alter table if exists fk_parent drop constraint if exists UK_fk_parent_code");
            st.execute("alter table if exists fk_parent add constraint UK_fk_parent_code unique (code)");
            st.execute("create table fk_child (id bigint not null, parent_id bigint, parent_code varchar(20), primary key (id))");
            st.execute("alter table if exists fk_child add constraint FK_child_parent foreign key (parent_id) references fk_parent");
            st.execute("alter table if exists fk_child add constraint FK_child_code foreign key (parent_code) references fk_parent (code)");
        }
        DatabaseMetaData md = conn.getMetaData();
        List<String> imported = new ArrayList<>();
        try (ResultSet rs = md.getImportedKeys(null, "public", "fk_child")) {
            while (rs.next()) {
                imported.add(rs.getString("FKCOLUMN_NAME") + "->" + rs.getString("PKTABLE_NAME") + "."
                        + rs.getString("PKCOLUMN_NAME") + ":" + rs.getString("FK_NAME") + ":"
                        + rs.getString("PK_NAME") + ":" + rs.getShort("KEY_SEQ"));
            }
        }
        check(imported.equals(List.of(
                "parent_code->fk_parent.code:fk_child_code:uk_fk_parent_code:1",
                "parent_id->fk_parent.id:fk_child_parent:fk_parent_pkey:1")),
                "getImportedKeys " + imported);
        List<String> exported = new ArrayList<>();
        try (ResultSet rs = md.getExportedKeys(null, "public", "fk_parent")) {
            while (rs.next()) {
                exported.add(rs.getString("FKTABLE_NAME") + "." + rs.getString("FKCOLUMN_NAME"));
            }
        }
        Collections.sort(exported);
        check(exported.equals(List.of("fk_child.parent_code", "fk_child.parent_id")), "getExportedKeys " + exported);
        try (Statement st = conn.createStatement()) {
            st.execute("insert into fk_parent values (1, 'a')");
            st.execute("insert into fk_child values (1, 1, 'a')");
            try {
                st.execute("insert into fk_child values (2, 9, null)");
                check(false, "a child of no parent is refused");
            } catch (SQLException e) {
                check("23503".equals(e.getSQLState()), "a child of no parent is 23503: " + e.getSQLState());
            }
            st.execute("drop table fk_child");
            st.execute("drop table fk_parent");
        }
    }

    static List<String> primaryKeys(DatabaseMetaData md, String table) throws SQLException {
        List<String> keys = new ArrayList<>();
        try (ResultSet rs = md.getPrimaryKeys(null, "public", table)) {
            while (rs.next()) {
                check(rs.getString("TABLE_NAME").equals(table), "getPrimaryKeys table name");
                keys.add(rs.getString("COLUMN_NAME") + ":" + rs.getInt("KEY_SEQ") + ":" + rs.getString("PK_NAME"));
            }
        }
        return keys;
    }

    // ResultSetMetaData names each column's base table (pgjdbc looks it up by the table
    // OID and attribute number of the RowDescription); a computed column has none.
    static void baseTables(Connection conn) throws SQLException {
        String[] queries = {
            // fast path (point get), then DataFusion (a join)
            "SELECT t, id, id + 1 AS x FROM items WHERE id = 0",
            "SELECT i.t, p.v, i.id + 1 AS x FROM items i JOIN pairs p ON p.b = i.id",
        };
        String[][] want = {{"items", "items", ""}, {"items", "pairs", ""}};
        String[][] names = {{"t", "id", "x"}, {"t", "v", "x"}};
        for (int q = 0; q < queries.length; q++) {
            try (Statement st = conn.createStatement(); ResultSet rs = st.executeQuery(queries[q])) {
                ResultSetMetaData m = rs.getMetaData();
                org.postgresql.PGResultSetMetaData pg = (org.postgresql.PGResultSetMetaData) m;
                for (int c = 1; c <= 3; c++) {
                    check(m.getTableName(c).equals(want[q][c - 1]), "getTableName " + queries[q] + " column " + c + ": " + m.getTableName(c));
                    check(pg.getBaseColumnName(c).equals(want[q][c - 1].isEmpty() ? "" : names[q][c - 1]),
                            "getBaseColumnName " + queries[q] + " column " + c + ": " + pg.getBaseColumnName(c));
                    check(m.getColumnName(c).equals(names[q][c - 1]), "getColumnName " + m.getColumnName(c));
                }
            }
        }
    }

    // preferQueryMode=simple: the driver writes every parameter into the SQL text as a
    // literal. pgjdbc 42.5 cannot write a bytea that way (setBytes leaves a bare `?` in
    // the statement; fixed upstream by pgjdbc/pgjdbc#3243), so bytea goes in as hex
    // text here, and the setBytes failure is checked to be the driver's syntax error.
    static void simpleMode(Connection conn, long base) throws SQLException {
        String ins = "INSERT INTO items (id, b, i2, i4, i8, f4, f8, t, bin) VALUES (?, ?, ?, ?, ?, ?, ?, ?, CAST(? AS bytea))";
        try (PreparedStatement ps = conn.prepareStatement(ins)) {
            for (int k = 0; k < 4; k++) {
                ps.setLong(1, base + k);
                if (k % 2 == 0) {
                    ps.setBoolean(2, k == 0);
                    ps.setShort(3, (short) -k);
                    ps.setInt(4, Integer.MIN_VALUE + k);
                    ps.setLong(5, Long.MAX_VALUE - k);
                    ps.setFloat(6, 0.25f * k);
                    ps.setDouble(7, -Math.E * k);
                    ps.setString(8, "it's \\ " + k);
                    ps.setString(9, "\\x00ff100" + k);
                } else {
                    for (int c = 2; c <= 9; c++) ps.setNull(c, Types.VARCHAR);
                }
                check(ps.executeUpdate() == 1, "simple insert " + k);
            }
        }
        try (PreparedStatement ps = conn.prepareStatement("SELECT b, i2, i4, i8, f4, f8, t, bin FROM items WHERE id = ? AND t = ?")) {
            ps.setLong(1, base + 2);
            ps.setString(2, "it's \\ 2");
            try (ResultSet rs = ps.executeQuery()) {
                check(rs.next(), "simple select finds the row by text parameter");
                check(!rs.getBoolean(1) && rs.getShort(2) == -2 && rs.getInt(3) == Integer.MIN_VALUE + 2
                        && rs.getLong(4) == Long.MAX_VALUE - 2 && rs.getFloat(5) == 0.5f
                        && rs.getDouble(6) == -Math.E * 2, "simple round trip of numbers and bool");
                check(Arrays.equals(rs.getBytes(8), new byte[] {0, (byte) 0xff, 0x10, 0x02}), "simple bytea from hex text");
                check(!rs.next(), "simple one row");
            }
        }
        try (PreparedStatement ps = conn.prepareStatement("SELECT count(*) FROM items WHERE id >= ? AND id < ? AND t IS NULL")) {
            ps.setLong(1, base);
            ps.setLong(2, base + 4);
            try (ResultSet rs = ps.executeQuery()) {
                check(rs.next() && rs.getLong(1) == 2, "simple setNull rows");
            }
        }
        try (PreparedStatement ps = conn.prepareStatement("SELECT id FROM items WHERE bin = ?")) {
            ps.setBytes(1, new byte[] {1, 2});
            ps.executeQuery();
            check(false, "pgjdbc 42.5 writes setBytes as a bare ? in simple mode");
        } catch (SQLException e) {
            check("42601".equals(e.getSQLState()), "simple setBytes is the driver's syntax error " + e.getSQLState() + " " + e.getMessage());
        }
        baseTables(conn);
    }

    static void types(Connection conn, long base, String mode) throws SQLException {
        byte[] blob = new byte[300];
        for (int i = 0; i < blob.length; i++) blob[i] = (byte) i;
        String ins = "INSERT INTO items (id, b, i2, i4, i8, f4, f8, t, bin) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)";
        // Beyond prepareThreshold: the statement turns into a named server-side one.
        try (PreparedStatement ps = conn.prepareStatement(ins)) {
            for (int k = 0; k < 8; k++) {
                long id = base + k;
                ps.setLong(1, id);
                if (k % 2 == 0) {
                    ps.setBoolean(2, k % 4 == 0);
                    ps.setShort(3, (short) (-k - 1));
                    ps.setInt(4, Integer.MAX_VALUE - k);
                    ps.setLong(5, Long.MIN_VALUE + k);
                    ps.setFloat(6, 1.5f * k);
                    ps.setDouble(7, Math.PI * k);
                    ps.setString(8, "text \u00e9 '" + k + "'");
                    ps.setBytes(9, blob);
                } else {
                    ps.setNull(2, Types.BOOLEAN);
                    ps.setNull(3, Types.SMALLINT);
                    ps.setNull(4, Types.INTEGER);
                    ps.setNull(5, Types.BIGINT);
                    ps.setNull(6, Types.REAL);
                    ps.setNull(7, Types.DOUBLE);
                    ps.setNull(8, Types.VARCHAR);
                    ps.setNull(9, Types.BINARY);
                }
                check(ps.executeUpdate() == 1, mode + " insert " + id);
            }
        }
        try (PreparedStatement ps = conn.prepareStatement(
                "SELECT id, b, i2, i4, i8, f4, f8, t, bin FROM items WHERE id = ?")) {
            for (int k = 0; k < 8; k++) {
                long id = base + k;
                ps.setLong(1, id);
                try (ResultSet rs = ps.executeQuery()) {
                    check(rs.next(), mode + " row " + id + " found");
                    check(rs.getLong(1) == id, "id");
                    if (k % 2 == 0) {
                        check(rs.getBoolean(2) == (k % 4 == 0), "bool");
                        check(rs.getShort(3) == (short) (-k - 1), "int2");
                        check(rs.getInt(4) == Integer.MAX_VALUE - k, "int4");
                        check(rs.getLong(5) == Long.MIN_VALUE + k, "int8");
                        check(rs.getFloat(6) == 1.5f * k, "float4");
                        check(rs.getDouble(7) == Math.PI * k, "float8 exact");
                        check(rs.getString(8).equals("text \u00e9 '" + k + "'"), "text");
                        check(Arrays.equals(rs.getBytes(9), blob), "bytea via setBytes/getBytes");
                    } else {
                        for (int c = 2; c <= 9; c++) {
                            rs.getObject(c);
                            check(rs.wasNull(), mode + " setNull column " + c);
                        }
                    }
                    check(!rs.next(), "one row");
                    if (k == 0 && base == 0) {
                        ResultSetMetaData m = rs.getMetaData();
                        int[] want = {Types.BIGINT, Types.BIT, Types.SMALLINT, Types.INTEGER, Types.BIGINT,
                            Types.REAL, Types.DOUBLE, Types.VARCHAR, Types.BINARY};
                        String[] names = {"int8", "bool", "int2", "int4", "int8", "float4", "float8", "text", "bytea"};
                        check(m.getColumnCount() == 9, "column count");
                        for (int c = 1; c <= 9; c++) {
                            check(m.getColumnType(c) == want[c - 1], "ResultSetMetaData type of column " + c + " " + m.getColumnType(c));
                            check(m.getColumnTypeName(c).equals(names[c - 1]), "type name " + m.getColumnTypeName(c));
                        }
                        check(m.getColumnName(5).equals("i8"), "column name");
                        check(m.getTableName(5).equals("items"), "table name of a point get column");
                    }
                }
            }
        }
        try (Statement st = conn.createStatement();
             ResultSet rs = st.executeQuery("SELECT count(*), sum(i4) FROM items WHERE id >= " + base + " AND id < " + (base + 8))) {
            check(rs.next() && rs.getLong(1) == 8, mode + " count");
            long sum = 0;
            for (int k = 0; k < 8; k += 2) sum += Integer.MAX_VALUE - k;
            check(rs.getLong(2) == sum, mode + " sum over ints");
        }
        try (PreparedStatement ps = conn.prepareStatement("UPDATE items SET t = ? WHERE id = ?")) {
            for (int k = 0; k < 7; k++) {
                ps.setString(1, "upd" + k);
                ps.setLong(2, base + k);
                check(ps.executeUpdate() == 1, mode + " update count " + k);
            }
        }
        try (PreparedStatement ps = conn.prepareStatement("SELECT t FROM items WHERE id = ?")) {
            ps.setLong(1, base + 6);
            try (ResultSet rs = ps.executeQuery()) {
                check(rs.next() && rs.getString(1).equals("upd6"), mode + " updated value");
            }
        }
        try (PreparedStatement ps = conn.prepareStatement("SELECT id FROM items WHERE t = ?")) {
            ps.setString(1, "no such text");
            try (ResultSet rs = ps.executeQuery()) {
                check(!rs.next(), mode + " no rows");
            }
        }
    }

    static void batch(Connection conn, long base, String mode) throws SQLException {
        try (PreparedStatement ps = conn.prepareStatement("INSERT INTO pairs (a, b, v) VALUES (?, ?, ?)")) {
            for (int k = 0; k < 20; k++) {
                ps.setString(1, "m" + base);
                ps.setLong(2, k);
                ps.setString(3, "v" + k);
                ps.addBatch();
            }
            int[] counts = ps.executeBatch();
            check(counts.length == 20 && Arrays.stream(counts).allMatch(c -> c == 1 || c == Statement.SUCCESS_NO_INFO), mode + " executeBatch counts");
        }
        try (Statement st = conn.createStatement()) {
            st.addBatch("UPDATE pairs SET v = 'x' WHERE a = 'm" + base + "' AND b = 1");
            st.addBatch("DELETE FROM pairs WHERE a = 'm" + base + "' AND b = 2");
            int[] counts = st.executeBatch();
            check(Arrays.equals(counts, new int[] {1, 1}), mode + " statement batch " + Arrays.toString(counts));
        }
        try (PreparedStatement ps = conn.prepareStatement("SELECT b, v FROM pairs WHERE a = ? ORDER BY b")) {
            ps.setString(1, "m" + base);
            try (ResultSet rs = ps.executeQuery()) {
                List<String> got = new ArrayList<>();
                while (rs.next()) got.add(rs.getLong(1) + "=" + rs.getString(2));
                check(got.size() == 19 && got.get(1).equals("1=x") && got.get(2).equals("3=v3"), mode + " batch rows " + got.size());
            }
        }
    }

    static void transactions(Connection conn, long base, String mode) throws SQLException {
        conn.setAutoCommit(false);
        try (PreparedStatement ps = conn.prepareStatement("INSERT INTO pairs (a, b, v) VALUES (?, ?, ?)")) {
            ps.setString(1, "tx" + base);
            ps.setLong(2, 1);
            ps.setString(3, "kept");
            ps.executeUpdate();
            conn.commit();
            ps.setString(1, "tx" + base);
            ps.setLong(2, 2);
            ps.setString(3, "dropped");
            ps.executeUpdate();
            conn.rollback();
        }
        conn.setAutoCommit(true);
        try (PreparedStatement ps = conn.prepareStatement("SELECT b, v FROM pairs WHERE a = ?")) {
            ps.setString(1, "tx" + base);
            try (ResultSet rs = ps.executeQuery()) {
                check(rs.next() && rs.getLong(1) == 1 && rs.getString(2).equals("kept"), mode + " committed row");
                check(!rs.next(), mode + " rolled back row absent");
            }
        }
        // A read-only connection (Spring's @Transactional(readOnly = true)): the driver
        // begins each transaction READ ONLY; reads run, a write is 25006.
        conn.setReadOnly(true);
        conn.setAutoCommit(false);
        try (PreparedStatement ps = conn.prepareStatement("SELECT count(*) FROM pairs WHERE a = ?")) {
            ps.setString(1, "tx" + base);
            try (ResultSet rs = ps.executeQuery()) {
                check(rs.next() && rs.getLong(1) == 1, mode + " a read-only transaction reads");
            }
        }
        try (PreparedStatement ps = conn.prepareStatement("INSERT INTO pairs (a, b, v) VALUES (?, ?, ?)")) {
            ps.setString(1, "tx" + base);
            ps.setLong(2, 3);
            ps.setString(3, "refused");
            ps.executeUpdate();
            check(false, mode + " a read-only transaction refuses an INSERT");
        } catch (SQLException e) {
            check("25006".equals(e.getSQLState()), mode + " a read-only transaction refuses an INSERT: " + e.getSQLState());
        }
        conn.rollback();
        conn.setAutoCommit(true);
        conn.setReadOnly(false);
        // A duplicate key is an error with SQLSTATE 23505, and the connection stays usable.
        try (PreparedStatement ps = conn.prepareStatement("INSERT INTO pairs (a, b, v) VALUES (?, ?, ?)")) {
            ps.setString(1, "tx" + base);
            ps.setLong(2, 1);
            ps.setString(3, "dup");
            try {
                ps.executeUpdate();
                check(false, "duplicate insert must fail");
            } catch (SQLException e) {
                check("23505".equals(e.getSQLState()), mode + " duplicate key SQLSTATE " + e.getSQLState());
            }
        }
        try (Statement st = conn.createStatement(); ResultSet rs = st.executeQuery("SELECT 1")) {
            check(rs.next() && rs.getInt(1) == 1, mode + " usable after error");
        }
        if (mode.equals("default")) baseTables(conn);
    }
}
