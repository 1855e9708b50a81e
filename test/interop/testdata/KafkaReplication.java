import java.io.BufferedReader;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.StringJoiner;

import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.metadata.MetadataJsonConverters;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.protocol.ObjectSerializationCache;
import org.apache.kafka.controller.PartitionChangeBuilder;
import org.apache.kafka.metadata.LeaderRecoveryState;
import org.apache.kafka.metadata.MetadataRecordSerde;
import org.apache.kafka.metadata.PartitionRegistration;
import org.apache.kafka.metadata.placement.ClusterDescriber;
import org.apache.kafka.metadata.placement.PartitionAssignment;
import org.apache.kafka.metadata.placement.PlacementSpec;
import org.apache.kafka.metadata.placement.StripedReplicaPlacer;
import org.apache.kafka.metadata.placement.TopicAssignment;
import org.apache.kafka.metadata.placement.UsableBroker;
import org.apache.kafka.server.common.ApiMessageAndVersion;
import org.apache.kafka.server.common.MetadataVersion;

/**
 * Kafka 4.4.0's own replica placer and partition change builder, for
 * kraftd's interop test (replication_test.go). One command a line on stdin,
 * one answer a line on stdout:
 *
 *   random SEED B1,B2,...  java.util.Random(SEED).nextInt(B) for each bound:
 *       "OK N N ..."
 *   place SEED BROKERS N:RF,N:RF,...  one StripedReplicaPlacer on
 *       Random(SEED) placing each spec in turn; BROKERS is
 *       ID/FENCED/RACK;... in iteration order, RACK "-" for none or "x" and
 *       the name's UTF-8 in hex. Each spec answers "R,R,R;R,R,R" (the
 *       partitions' replicas, then "@" and their default directories, the
 *       broker id's last byte as a uuid) or "ERR CLASS MESSAGE_HEX"; the
 *       specs' answers are joined with "|" after "OK ".
 *   change KEY=VALUE ...  a PartitionChangeBuilder (keys below); "NONE",
 *       "OK VERSION HEX JSON" (the record as MetadataRecordSerde writes it) or
 *       "ERR CLASS MESSAGE_HEX".
 *
 * A command that fails outright answers "ERR CLASS MESSAGE_HEX".
 */
public class KafkaReplication {
    private static final HexFormat HEX = HexFormat.of();

    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        PrintStream out = new PrintStream(new FileOutputStream(FileDescriptor.out), false, StandardCharsets.UTF_8);
        String line;
        while ((line = in.readLine()) != null) {
            String[] f = line.split(" ");
            try {
                switch (f[0]) {
                    case "random" -> out.println(random(Long.parseLong(f[1]), f[2]));
                    case "place" -> out.println(place(Long.parseLong(f[1]), f[2], f[3]));
                    case "change" -> out.println(change(f));
                    default -> throw new IllegalArgumentException("unknown command " + f[0]);
                }
            } catch (Throwable e) {
                out.println(err(e));
            }
        }
        out.flush();
    }

    private static String err(Throwable e) {
        return "ERR " + e.getClass().getSimpleName() + " " + HEX.formatHex(String.valueOf(e.getMessage()).getBytes(StandardCharsets.UTF_8));
    }

    private static String random(long seed, String bounds) {
        Random r = new Random(seed);
        StringJoiner j = new StringJoiner(" ", "OK ", "");
        for (String b : bounds.split(",")) {
            j.add(String.valueOf(r.nextInt(Integer.parseInt(b))));
        }
        return j.toString();
    }

    private static Uuid dirOf(int broker) {
        return new Uuid(0L, 1000L + broker);
    }

    private static String place(long seed, String brokers, String specs) {
        List<UsableBroker> usable = new ArrayList<>();
        for (String b : brokers.split(";")) {
            String[] p = b.split("/", -1);
            Optional<String> rack = p[2].equals("-") ? Optional.empty()
                : Optional.of(new String(HEX.parseHex(p[2].substring(1)), StandardCharsets.UTF_8));
            usable.add(new UsableBroker(Integer.parseInt(p[0]), rack, p[1].equals("1")));
        }
        ClusterDescriber cluster = new ClusterDescriber() {
            @Override
            public Iterator<UsableBroker> usableBrokers() {
                return usable.iterator();
            }

            @Override
            public Uuid defaultDir(int brokerId) {
                return dirOf(brokerId);
            }
        };
        StripedReplicaPlacer placer = new StripedReplicaPlacer(new Random(seed));
        StringJoiner all = new StringJoiner("|", "OK ", "");
        int start = 0;
        for (String s : specs.split(",")) {
            String[] p = s.split(":");
            int n = Integer.parseInt(p[0]);
            short rf = Short.parseShort(p[1]);
            try {
                TopicAssignment a = placer.place(new PlacementSpec(start, n, rf), cluster);
                StringJoiner parts = new StringJoiner(";");
                for (PartitionAssignment pa : a.assignments()) {
                    StringJoiner r = new StringJoiner(",");
                    pa.replicas().forEach(x -> r.add(String.valueOf(x)));
                    for (int i = 0; i < pa.replicas().size(); i++) {
                        if (!pa.directories().get(i).equals(dirOf(pa.replicas().get(i)))) {
                            throw new IllegalStateException("directory of " + pa.replicas().get(i));
                        }
                    }
                    parts.add(r.toString());
                }
                all.add(parts.toString());
            } catch (Exception e) {
                all.add(err(e));
            }
            start += n;
        }
        return all.toString();
    }

    private static int[] ints(String s) {
        if (s.isEmpty()) return new int[0];
        String[] p = s.split(",");
        int[] out = new int[p.length];
        for (int i = 0; i < p.length; i++) out[i] = Integer.parseInt(p[i]);
        return out;
    }

    private static List<Integer> list(String s) {
        List<Integer> out = new ArrayList<>();
        for (int x : ints(s)) out.add(x);
        return out;
    }

    private static Uuid[] uuids(String s) {
        if (s.isEmpty()) return new Uuid[0];
        String[] p = s.split(",");
        Uuid[] out = new Uuid[p.length];
        for (int i = 0; i < p.length; i++) out[i] = Uuid.fromString(p[i]);
        return out;
    }

    private static Map<Integer, Uuid> dirMap(String s) {
        Map<Integer, Uuid> m = new HashMap<>();
        if (s.isEmpty()) return m;
        for (String e : s.split(",")) {
            String[] p = e.split(":");
            m.put(Integer.parseInt(p[0]), Uuid.fromString(p[1]));
        }
        return m;
    }

    /**
     * Keys: mv (feature level), elr (0/1), minisr, lkl (0/1: the last-known
     * leader), topic (uuid), part; the partition: replicas, dirs, isr,
     * removing, adding, pelr, plke, leader, lrs, lepoch, pepoch; the cluster:
     * accept (acceptable leaders), defaults (BROKER:UUID default dirs, absent
     * for no provider); the change: tisr, treplicas, tremoving, tadding,
     * tlrs, unclean (uncleanShutdownReplicas), election
     * (PREFERRED/ONLINE/UNCLEAN), setdir (BROKER:UUID, in order).
     */
    private static String change(String[] f) {
        Map<String, String> kv = new HashMap<>();
        List<String[]> setdirs = new ArrayList<>();
        for (int i = 1; i < f.length; i++) {
            int eq = f[i].indexOf('=');
            String k = f[i].substring(0, eq), v = f[i].substring(eq + 1);
            if (k.equals("setdir")) {
                setdirs.add(v.split(":"));
            } else {
                kv.put(k, v);
            }
        }
        MetadataVersion mv = MetadataVersion.fromFeatureLevel(Short.parseShort(kv.get("mv")));
        PartitionRegistration part = new PartitionRegistration.Builder()
            .setReplicas(ints(kv.get("replicas")))
            .setDirectories(uuids(kv.get("dirs")))
            .setIsr(ints(kv.get("isr")))
            .setRemovingReplicas(ints(kv.get("removing")))
            .setAddingReplicas(ints(kv.get("adding")))
            .setElr(ints(kv.get("pelr")))
            .setLastKnownElr(ints(kv.get("plke")))
            .setLeader(Integer.parseInt(kv.get("leader")))
            .setLeaderRecoveryState(LeaderRecoveryState.of(Byte.parseByte(kv.get("lrs"))))
            .setLeaderEpoch(Integer.parseInt(kv.get("lepoch")))
            .setPartitionEpoch(Integer.parseInt(kv.get("pepoch")))
            .build();
        List<Integer> accept = list(kv.get("accept"));
        PartitionChangeBuilder b = new PartitionChangeBuilder(part, Uuid.fromString(kv.get("topic")),
            Integer.parseInt(kv.get("part")), accept::contains, mv, Integer.parseInt(kv.get("minisr")),
            kv.get("elr").equals("1"));
        b.setUseLastKnownLeaderInBalancedRecovery(kv.get("lkl").equals("1"));
        if (kv.containsKey("defaults")) {
            Map<Integer, Uuid> defaults = dirMap(kv.get("defaults"));
            b.setDefaultDirProvider(id -> defaults.getOrDefault(id, dirOf(id)));
        }
        if (kv.containsKey("tisr")) b.setTargetIsr(list(kv.get("tisr")));
        if (kv.containsKey("treplicas")) b.setTargetReplicas(list(kv.get("treplicas")));
        if (kv.containsKey("tremoving")) b.setTargetRemoving(list(kv.get("tremoving")));
        if (kv.containsKey("tadding")) b.setTargetAdding(list(kv.get("tadding")));
        if (kv.containsKey("tlrs")) b.setTargetLeaderRecoveryState(LeaderRecoveryState.of(Byte.parseByte(kv.get("tlrs"))));
        if (kv.containsKey("unclean")) b.setUncleanShutdownReplicas(list(kv.get("unclean")));
        if (kv.containsKey("election")) b.setElection(PartitionChangeBuilder.Election.valueOf(kv.get("election")));
        for (String[] d : setdirs) b.setDirectory(Integer.parseInt(d[0]), Uuid.fromString(d[1]));
        Optional<ApiMessageAndVersion> rec;
        try {
            rec = b.build();
        } catch (Exception e) {
            return err(e);
        }
        if (rec.isEmpty()) return "NONE";
        ApiMessageAndVersion m = rec.get();
        try {
            ObjectSerializationCache cache = new ObjectSerializationCache();
            ByteBuffer buf = ByteBuffer.allocate(MetadataRecordSerde.INSTANCE.recordSize(m, cache));
            MetadataRecordSerde.INSTANCE.write(m, cache, new ByteBufferAccessor(buf));
            return "OK " + m.version() + " " + HEX.formatHex(buf.array()) + " " +
                MetadataJsonConverters.writeJson(m.message(), m.version());
        } catch (Exception e) {
            return err(e) + " " + MetadataJsonConverters.writeJson(m.message(), (short) 2);
        }
    }
}
