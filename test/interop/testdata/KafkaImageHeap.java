import java.util.ArrayList;
import java.util.List;
import java.util.Random;

import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.metadata.FeatureLevelRecord;
import org.apache.kafka.common.metadata.PartitionChangeRecord;
import org.apache.kafka.common.metadata.PartitionRecord;
import org.apache.kafka.common.metadata.RegisterBrokerRecord;
import org.apache.kafka.common.metadata.TopicRecord;
import org.apache.kafka.image.MetadataDelta;
import org.apache.kafka.image.MetadataImage;
import org.apache.kafka.image.MetadataProvenance;

// KafkaImageHeap replays the synthetic cluster of kraftd's BenchmarkImage
// (1000 brokers with a log directory each, topics of 10 to 100 partitions at
// RF 3 with directories, a change to one partition in ten) into Kafka 4.4's
// MetadataDelta and prints the live heap of the MetadataImage per partition:
// "partitions=N bytes_per_partition=B". Only the broker-side image: a
// controller keeps its own structures besides.
public class KafkaImageHeap {
    static long used() throws InterruptedException {
        for (int i = 0; i < 5; i++) {
            System.gc();
            Thread.sleep(100);
        }
        Runtime r = Runtime.getRuntime();
        return r.totalMemory() - r.freeMemory();
    }

    // A record read from the log holds Uuid objects of its own.
    static Uuid copy(Uuid u) {
        return new Uuid(u.getMostSignificantBits(), u.getLeastSignificantBits());
    }

    public static void main(String[] args) throws Exception {
        int n = Integer.parseInt(args[0]);
        int brokers = 1000;
        Random r = new Random(42);
        long before = used();
        MetadataDelta d = new MetadataDelta.Builder().setImage(MetadataImage.EMPTY).build();
        d.replay(new FeatureLevelRecord().setName("metadata.version").setFeatureLevel((short) 33));
        d.replay(new FeatureLevelRecord().setName("eligible.leader.replicas.version").setFeatureLevel((short) 1));
        Uuid[] dirs = new Uuid[brokers];
        for (int b = 0; b < brokers; b++) {
            dirs[b] = new Uuid(0x8000000000000000L | ((long) b << 40), 1);
            RegisterBrokerRecord rb = new RegisterBrokerRecord().setBrokerId(b).setBrokerEpoch(b)
                .setIncarnationId(new Uuid(1, b)).setLogDirs(List.of(dirs[b])).setFenced(false);
            rb.endPoints().add(new RegisterBrokerRecord.BrokerEndpoint().setName("PLAINTEXT").setHost("localhost").setPort(9000 + b));
            d.replay(rb);
        }
        List<PartitionChangeRecord> changes = new ArrayList<>();
        for (int t = 0, made = 0; made < n; t++) {
            Uuid id = new Uuid(0x4000000000000000L | t, 7);
            d.replay(new TopicRecord().setName("topic-" + t).setTopicId(id));
            int parts = Math.min(10 + r.nextInt(91), n - made);
            for (int p = 0; p < parts; p++) {
                List<Integer> reps = new ArrayList<>();
                while (reps.size() < 3) {
                    int b = r.nextInt(brokers);
                    if (!reps.contains(b)) reps.add(b);
                }
                d.replay(new PartitionRecord().setTopicId(id).setPartitionId(p).setReplicas(reps)
                    .setIsr(new ArrayList<>(reps)).setLeader(reps.get(0)).setLeaderEpoch(0).setPartitionEpoch(0)
                    .setDirectories(List.of(copy(dirs[reps.get(0)]), copy(dirs[reps.get(1)]), copy(dirs[reps.get(2)]))));
                if (r.nextInt(10) == 0) {
                    PartitionChangeRecord c = new PartitionChangeRecord().setTopicId(id).setPartitionId(p);
                    if (r.nextInt(2) == 0) c.setIsr(reps.subList(0, 2));
                    else c.setLeader(reps.get(1));
                    changes.add(c);
                }
            }
            made += parts;
        }
        MetadataImage image = d.apply(new MetadataProvenance(1, 1, 0, true));
        d = new MetadataDelta.Builder().setImage(image).build();
        for (PartitionChangeRecord c : changes) d.replay(c);
        changes = null;
        image = d.apply(new MetadataProvenance(2, 1, 0, true));
        d = null;
        long after = used();
        if (image.topics().topicsById().isEmpty()) throw new IllegalStateException("no topics");
        System.out.printf("partitions=%d bytes_per_partition=%.1f%n", n, (after - before) / (double) n);
    }
}
