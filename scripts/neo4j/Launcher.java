// Launcher starts an embedded Neo4j 5 Community DBMS with its Bolt connector on a free
// loopback port, prints "BOLT_PORT=<port>" once it accepts connections, and shuts the DBMS
// down cleanly on SIGTERM or SIGINT. It is a test fixture: authentication is off and it
// listens on 127.0.0.1 only.
//
//   java -cp <classpath> Launcher.java <home directory> [port]
//
// With no port (or 0) it picks a free one. run.sh drives it.
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;

import org.neo4j.configuration.GraphDatabaseSettings;
import org.neo4j.configuration.connectors.BoltConnector;
import org.neo4j.configuration.connectors.HttpConnector;
import org.neo4j.configuration.helpers.SocketAddress;
import org.neo4j.dbms.api.DatabaseManagementService;
import org.neo4j.dbms.api.DatabaseManagementServiceBuilder;
import org.neo4j.graphdb.GraphDatabaseService;

public class Launcher {
    public static void main(String[] args) throws Exception {
        if (args.length < 1) {
            System.err.println("usage: Launcher <home directory> [port]");
            System.exit(2);
        }
        Path home = Path.of(args[0]).toAbsolutePath();
        int port = args.length > 1 ? Integer.parseInt(args[1]) : 0;
        if (port == 0) {
            port = freePort();
        }
        DatabaseManagementService dbms = new DatabaseManagementServiceBuilder(home)
                .setConfig(BoltConnector.enabled, true)
                .setConfig(BoltConnector.listen_address, new SocketAddress("127.0.0.1", port))
                .setConfig(BoltConnector.encryption_level, BoltConnector.EncryptionLevel.DISABLED)
                .setConfig(HttpConnector.enabled, false)
                .setConfig(GraphDatabaseSettings.auth_enabled, false)
                // Small: the machine is shared and the test data are tiny.
                .setConfig(GraphDatabaseSettings.pagecache_memory, 256L << 20)
                .setConfig(GraphDatabaseSettings.transaction_timeout, Duration.ofMinutes(2))
                .build();
        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            dbms.shutdown();
            stopped.countDown();
        }, "neo4j-shutdown"));
        GraphDatabaseService db = dbms.database(GraphDatabaseSettings.DEFAULT_DATABASE_NAME);
        // Wait until the default database is available, so the first Bolt session works.
        if (!db.isAvailable(Duration.ofMinutes(2).toMillis())) {
            System.err.println("neo4j: the default database did not become available");
            System.exit(1);
        }
        System.out.println("BOLT_PORT=" + port);
        System.out.flush();
        stopped.await();
    }

    // freePort asks the kernel for an unused loopback port. Another process could take it
    // before Neo4j binds it; run.sh then fails loudly and can be re-run.
    static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            s.setReuseAddress(true);
            return s.getLocalPort();
        }
    }
}
