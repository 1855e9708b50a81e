import java.io.File;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.PrintStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;

import org.apache.kafka.common.metadata.MetadataRecordType;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.protocol.ObjectSerializationCache;
import org.apache.kafka.common.record.internal.FileRecords;
import org.apache.kafka.common.record.internal.Record;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.apache.kafka.image.MetadataDelta;
import org.apache.kafka.image.MetadataImage;
import org.apache.kafka.image.MetadataProvenance;
import org.apache.kafka.image.writer.ImageWriter;
import org.apache.kafka.image.writer.ImageWriterOptions;
import org.apache.kafka.metadata.MetadataRecordSerde;
import org.apache.kafka.server.common.ApiMessageAndVersion;

/**
 * What Kafka 4.4.0's own image classes build from a metadata log, for kraftd's
 * interop tests (image_judge_long_test.go):
 *
 *   KafkaImageRecords PARTITION_DIR [SNAPSHOT_FILE] -- OFFSET...
 *
 * replays PARTITION_DIR's segments (after SNAPSHOT_FILE's records, if given;
 * from its end offset on) batch by batch into MetadataDelta and, for each
 * OFFSET (ascending), takes the image after the last batch ending at or
 * before it, outside metadata transactions (an aborted one reverts to the
 * image before its Begin, as MetadataLoader does), and prints what
 * MetadataImage.write emits:
 *
 *   IMAGE LAST_CONTAINED_OFFSET COUNT
 *   HEX          one line a record, as MetadataRecordSerde writes it
 *   END
 *
 * A failure prints "ERR MESSAGE" and exits 1.
 */
public class KafkaImageRecords {
    private static final HexFormat HEX = HexFormat.of();

    private MetadataImage image = MetadataImage.EMPTY; // published
    private MetadataDelta delta = new MetadataDelta.Builder().setImage(MetadataImage.EMPTY).build();
    private MetadataImage preTx; // the image at the open transaction's Begin
    private long lastOffset = -1;
    private int lastEpoch = 0;
    private boolean dirty;

    public static void main(String[] args) throws Exception {
        PrintStream out = new PrintStream(new FileOutputStream(FileDescriptor.out), false, StandardCharsets.UTF_8);
        try {
            new KafkaImageRecords().run(args, out);
        } catch (Throwable e) {
            out.println("ERR " + e.toString().replace('\n', ' '));
            out.flush();
            System.exit(1);
        }
        out.flush();
    }

    private void run(String[] args, PrintStream out) throws Exception {
        int sep = Arrays.asList(args).indexOf("--");
        File dir = new File(args[0]);
        List<Long> offsets = new ArrayList<>();
        for (int i = sep + 1; i < args.length; i++) offsets.add(Long.parseLong(args[i]));
        long from = 0;
        if (sep == 2) {
            File snap = new File(args[1]);
            from = Long.parseLong(snap.getName().substring(0, 20));
            int epoch = Integer.parseInt(snap.getName().substring(21, 31));
            try (FileRecords fr = FileRecords.open(snap)) {
                for (RecordBatch b : fr.batches()) {
                    if (b.isControlBatch()) continue;
                    for (Record r : b) replay(r);
                }
            }
            delta.finishSnapshot();
            lastOffset = from - 1;
            lastEpoch = epoch;
            publish();
        }
        File[] segs = dir.listFiles((d, n) -> n.endsWith(".log"));
        Arrays.sort(segs);
        int next = 0;
        for (File seg : segs) {
            try (FileRecords fr = FileRecords.open(seg)) {
                for (RecordBatch b : fr.batches()) {
                    if (b.lastOffset() < from) continue;
                    while (next < offsets.size() && b.lastOffset() > offsets.get(next)) {
                        print(out);
                        next++;
                    }
                    if (!b.isControlBatch()) {
                        for (Record r : b) {
                            if (r.offset() >= from) replay(r);
                        }
                    }
                    lastOffset = b.lastOffset();
                    lastEpoch = b.partitionLeaderEpoch();
                    dirty = true;
                    if (preTx == null) publish();
                }
            }
        }
        for (; next < offsets.size(); next++) print(out);
    }

    private void replay(Record r) {
        ByteBuffer v = r.value();
        ApiMessageAndVersion m = MetadataRecordSerde.INSTANCE.read(new ByteBufferAccessor(v), v.remaining());
        switch (MetadataRecordType.fromId(m.message().apiKey())) {
            case BEGIN_TRANSACTION_RECORD -> {
                publish();
                preTx = image;
            }
            case END_TRANSACTION_RECORD -> preTx = null;
            case ABORT_TRANSACTION_RECORD -> {
                image = preTx;
                delta = new MetadataDelta.Builder().setImage(image).build();
                preTx = null;
            }
            default -> delta.replay(m.message());
        }
    }

    private void publish() {
        if (!dirty && lastOffset < 0) return;
        image = delta.apply(new MetadataProvenance(lastOffset, lastEpoch, 0, true));
        delta = new MetadataDelta.Builder().setImage(image).build();
        dirty = false;
    }

    private void print(PrintStream out) {
        List<String> recs = new ArrayList<>();
        if (!image.isEmpty()) {
            ObjectSerializationCache cache = new ObjectSerializationCache();
            image.write(new ImageWriter() {
                @Override
                public void write(ApiMessageAndVersion rec) {
                    ByteBuffer buf = ByteBuffer.allocate(MetadataRecordSerde.INSTANCE.recordSize(rec, cache));
                    MetadataRecordSerde.INSTANCE.write(rec, cache, new ByteBufferAccessor(buf));
                    recs.add(HEX.formatHex(buf.array()));
                }

                @Override
                public void close(boolean complete) {
                }
            }, new ImageWriterOptions.Builder(image).build());
        }
        out.println("IMAGE " + image.provenance().lastContainedOffset() + " " + recs.size());
        for (String r : recs) out.println(r);
        out.println("END");
    }
}
