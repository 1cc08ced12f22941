// DynamoDB Local on 127.0.0.1 only. Its own entry point (ServerRunner) binds Jetty to every
// interface and has no option for an address, while every other local stand-in listens on
// loopback: this builds the server from the same command line, sets the one connector's host,
// and starts it. Telemetry is left unconfigured (off). Compiled once into .cache by
// infra/local/dynamodb/dynamodb-loopback.ts with the JDK compiler module that Java 17 ships.
import java.lang.reflect.Field;
import org.eclipse.jetty.server.Connector;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import software.amazon.dynamodb.services.local.main.ServerRunner;
import software.amazon.dynamodb.services.local.server.DynamoDBProxyServer;

public class LoopbackDynamoDbLocal {
  public static void main(String[] args) throws Exception {
    DynamoDBProxyServer proxy = ServerRunner.createServerFromCommandLineArgs(args);
    Field field = DynamoDBProxyServer.class.getDeclaredField("server");
    field.setAccessible(true);
    Server server = (Server) field.get(proxy);
    for (Connector connector : server.getConnectors())
      if (connector instanceof ServerConnector serverConnector) serverConnector.setHost("127.0.0.1");
    proxy.start();
  }
}
