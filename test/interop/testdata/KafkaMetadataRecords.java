import java.io.BufferedReader;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.HexFormat;

import com.fasterxml.jackson.databind.ObjectMapper;

import org.apache.kafka.common.metadata.MetadataJsonConverters;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.protocol.ObjectSerializationCache;
import org.apache.kafka.metadata.MetadataRecordSerde;
import org.apache.kafka.server.common.ApiMessageAndVersion;
import org.apache.kafka.server.common.MetadataVersion;

/**
 * Kafka 4.4.0's own reading and writing of metadata records, for kraftd's
 * interop test (metadata_records_test.go). One command a line on stdin, one
 * answer a line on stdout (levels: one line a MetadataVersion, then "END"):
 *
 *   json KEY VERSION KRAFTD_HEX JSON  the record of JSON (Kafka's JSON form)
 *       at VERSION, as MetadataRecordSerde writes it; and whether
 *       MetadataRecordSerde reads KRAFTD_HEX, kraftd's encoding, as the same
 *       record: "OK KAFKA_HEX same", "OK KAFKA_HEX differs:JSON_HEX",
 *       "OK KAFKA_HEX unreadable:MESSAGE_HEX"
 *   bytes HEX  the record MetadataRecordSerde reads from HEX, written again:
 *       "OK KEY VERSION HEX JSON"
 *   levels  every MetadataVersion's level, name and predicates
 *
 * A command Kafka fails answers "ERR MESSAGE_HEX".
 */
public class KafkaMetadataRecords {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final HexFormat HEX = HexFormat.of();

    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        PrintStream out = new PrintStream(new FileOutputStream(FileDescriptor.out), false, StandardCharsets.UTF_8);
        String line;
        while ((line = in.readLine()) != null) {
            String[] f = line.split(" ", 5);
            try {
                switch (f[0]) {
                    case "json" -> out.println(json(Short.parseShort(f[1]), Short.parseShort(f[2]), f[3], f[4]));
                    case "bytes" -> out.println(bytes(f[1]));
                    case "levels" -> levels(out);
                    default -> throw new IllegalArgumentException("unknown command " + f[0]);
                }
            } catch (Throwable e) {
                out.println("ERR " + hex(describe(e)));
            }
        }
        out.flush();
    }

    private static String json(short key, short version, String kraftdHex, String json) throws Exception {
        ApiMessage msg = MetadataJsonConverters.readJson(JSON.readTree(json), key, version);
        String kafka = HEX.formatHex(write(new ApiMessageAndVersion(msg, version)));
        String verdict;
        try {
            ApiMessageAndVersion mine = read(HEX.parseHex(kraftdHex));
            if (mine.version() == version && mine.message().equals(msg)) {
                verdict = "same";
            } else {
                verdict = "differs:" + hex(mine.version() + " " + MetadataJsonConverters.writeJson(mine.message(), mine.version()));
            }
        } catch (Exception e) {
            verdict = "unreadable:" + hex(describe(e));
        }
        return "OK " + kafka + " " + verdict;
    }

    private static String bytes(String h) {
        ApiMessageAndVersion m = read(HEX.parseHex(h));
        return "OK " + m.message().apiKey() + " " + m.version() + " " + HEX.formatHex(write(m)) + " " +
            MetadataJsonConverters.writeJson(m.message(), m.version());
    }

    private static void levels(PrintStream out) {
        for (MetadataVersion v : MetadataVersion.values()) {
            out.println(String.join(" ",
                String.valueOf(v.featureLevel()), v.version(),
                "production=" + v.isProduction(),
                "migration=" + v.isMigrationSupported(),
                "scram=" + v.isScramSupported(),
                "epochBumpOnIsrShrink=" + v.isLeaderEpochBumpRequiredOnIsrShrink(),
                "transactions=" + v.isMetadataTransactionSupported(),
                "delegationTokens=" + v.isDelegationTokenSupported(),
                "controllerRegistration=" + v.isControllerRegistrationSupported(),
                "directoryAssignment=" + v.isDirectoryAssignmentSupported(),
                "elr=" + v.isElrSupported(),
                "cordonedLogDirs=" + v.isCordonedLogDirsSupported(),
                "cidrAcl=" + v.isCidrAclSupported(),
                "controllerUnregistration=" + v.isControllerUnregistrationSupported(),
                "registerBrokerRecord=" + v.registerBrokerRecordVersion(),
                "partitionRecord=" + v.partitionRecordVersion(),
                "partitionChangeRecord=" + v.partitionChangeRecordVersion(),
                "registerControllerRecord=" + (v.isControllerRegistrationSupported() ? v.registerControllerRecordVersion() : -1)));
        }
        out.println("END");
    }

    private static byte[] write(ApiMessageAndVersion m) {
        ObjectSerializationCache cache = new ObjectSerializationCache();
        ByteBuffer buf = ByteBuffer.allocate(MetadataRecordSerde.INSTANCE.recordSize(m, cache));
        MetadataRecordSerde.INSTANCE.write(m, cache, new ByteBufferAccessor(buf));
        if (buf.hasRemaining()) {
            throw new IllegalStateException("recordSize and write disagree");
        }
        return buf.array();
    }

    private static ApiMessageAndVersion read(byte[] b) {
        return MetadataRecordSerde.INSTANCE.read(new ByteBufferAccessor(ByteBuffer.wrap(b)), b.length);
    }

    private static String describe(Throwable e) {
        StringBuilder s = new StringBuilder(String.valueOf(e));
        for (Throwable c = e.getCause(); c != null; c = c.getCause()) {
            s.append(": ").append(c);
        }
        return s.toString();
    }

    private static String hex(String s) {
        return HEX.formatHex(s.getBytes(StandardCharsets.UTF_8));
    }
}
