// Events.java - the chain's event row as the Java peers store it (primed's: docs/chain.md): one
// INSERT of (now, pod) and the id the database generated. Shared by Chain.java (H2 through the
// JDK peer's pool) and Stacks.java (HikariCP to H2 or PostgreSQL); each brings its connection.
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.sql.Timestamp;

final class Events {
    private Events() {}

    /** Inserts an event row into table (a constant: "event" or "java_event") on c; its generated id. */
    static long insert(Connection c, String table, String pod) throws SQLException {
        try (PreparedStatement s = c.prepareStatement("INSERT INTO " + table + "(ts, pod) VALUES (?, ?)",
                                                      Statement.RETURN_GENERATED_KEYS)) {
            s.setTimestamp(1, new Timestamp(System.currentTimeMillis()));
            s.setString(2, pod);
            s.executeUpdate();
            try (ResultSet k = s.getGeneratedKeys()) {
                k.next();
                return k.getLong(1);
            }
        }
    }
}
