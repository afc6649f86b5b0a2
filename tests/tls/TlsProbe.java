// Connects with pgjdbc to the URL given and runs one query; used by tests/tls.rs to show
// sslmode=require and verify-full work with the JDBC driver, not only with libpq.
// Usage: java -cp postgresql.jar TlsProbe.java URL USER PASSWORD
// Prints "answer: <value>" on success, or "error <SQLSTATE>: <message>" and exits 1.

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Properties;

public class TlsProbe {
    public static void main(String[] args) {
        Properties props = new Properties();
        props.setProperty("user", args[1]);
        props.setProperty("password", args[2]);
        try (Connection conn = DriverManager.getConnection(args[0], props);
                Statement st = conn.createStatement();
                ResultSet rs = st.executeQuery("SELECT 'over ' || 'jdbc'")) {
            rs.next();
            System.out.println("answer: " + rs.getString(1));
        } catch (SQLException e) {
            Throwable cause = e.getCause();
            System.out.println("error " + e.getSQLState() + ": " + e.getMessage()
                    + (cause == null ? "" : " / cause: " + cause));
            System.exit(1);
        }
    }
}
