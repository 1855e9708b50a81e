import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.lang.reflect.Constructor;
import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.util.Optional;

import org.apache.kafka.common.utils.Time;
import org.apache.kafka.controller.BrokerIdAndEpoch;

/**
 * Kafka 4.4.0's BrokerHeartbeatTracker (package-private, reached by
 * reflection), for kraftd's interop test (cluster_tracker_test.go). One
 * command a line on stdin, an answer a line on stdout for each expire:
 *
 *   contact ID EPOCH NANOS   updateContactTime
 *   expire NANOS             maybeRemoveExpired: "ID EPOCH", or "none"
 *
 * The session timeout is the first argument, in nanoseconds.
 */
public class KafkaHeartbeatTracker {
    public static void main(String[] args) throws Exception {
        Class<?> cls = Class.forName("org.apache.kafka.controller.BrokerHeartbeatTracker");
        Constructor<?> ctor = cls.getDeclaredConstructor(Time.class, long.class);
        ctor.setAccessible(true);
        Object tracker = ctor.newInstance(Time.SYSTEM, Long.parseLong(args[0]));
        Method contact = cls.getDeclaredMethod("updateContactTime", BrokerIdAndEpoch.class, long.class);
        contact.setAccessible(true);
        Method expire = cls.getDeclaredMethod("maybeRemoveExpired", long.class);
        expire.setAccessible(true);
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        StringBuilder out = new StringBuilder();
        for (String line; (line = in.readLine()) != null; ) {
            String[] f = line.trim().split(" ");
            switch (f[0]) {
                case "contact":
                    contact.invoke(tracker, new BrokerIdAndEpoch(Integer.parseInt(f[1]), Long.parseLong(f[2])), Long.parseLong(f[3]));
                    break;
                case "expire":
                    @SuppressWarnings("unchecked")
                    Optional<BrokerIdAndEpoch> e = (Optional<BrokerIdAndEpoch>) expire.invoke(tracker, Long.parseLong(f[1]));
                    out.append(e.map(x -> x.id() + " " + x.epoch()).orElse("none")).append('\n');
                    break;
                case "":
                    break;
                default:
                    throw new IllegalArgumentException("unknown command " + f[0]);
            }
        }
        System.out.print(out);
    }
}
