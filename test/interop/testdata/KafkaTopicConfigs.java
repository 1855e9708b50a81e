import java.io.BufferedReader;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.lang.reflect.Constructor;
import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.util.AbstractMap.SimpleImmutableEntry;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.TreeMap;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import kafka.server.ControllerConfigurationValidator;
import kafka.server.KafkaConfig;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.metadata.ClearElrRecord;
import org.apache.kafka.common.metadata.ConfigRecord;
import org.apache.kafka.common.metadata.FeatureLevelRecord;
import org.apache.kafka.common.requests.ApiError;
import org.apache.kafka.common.requests.DescribeConfigsResponse;
import org.apache.kafka.common.utils.internals.LogContext;
import org.apache.kafka.controller.QuorumFeatures;
import org.apache.kafka.metadata.KafkaConfigSchema;
import org.apache.kafka.metadata.SupportedConfigChecker;
import org.apache.kafka.server.common.ApiMessageAndVersion;
import org.apache.kafka.server.common.MetadataVersion;
import org.apache.kafka.server.config.ConfigSynonym;
import org.apache.kafka.server.config.ServerTopicConfigSynonyms;
import org.apache.kafka.storage.internals.log.LogConfig;
import org.apache.kafka.timeline.SnapshotRegistry;

/**
 * Kafka 4.4.0's own topic configuration schema, config validation and
 * effective topic configs, for kraftd's interop tests (configs_test.go).
 * One JSON command a line on stdin, one JSON answer a line on stdout,
 * prefixed "R " (so log lines cannot be mistaken for answers):
 *
 *   {"op":"schema"}  LogConfig's keys in definition order (name, type,
 *       default, validator string, internal, synonyms with their unit), the
 *       LIST keys of KafkaConfig with defaults, the ConfigSource ids
 *   {"op":"alter", ...}  a fresh ConfigurationControlManager (with Kafka's
 *       ControllerConfigurationValidator over a KafkaConfig of "static"),
 *       the "existing" ConfigRecords replayed, then incrementalAlterConfigs
 *       (or legacyAlterConfigs when "legacy") of "ops" on "resource":
 *       the resource's error code and message and the records written
 *   {"op":"effective", ...}  KafkaConfigSchema.resolveEffectiveTopicConfigs
 *       of "static", "cluster", "node", "topic", sorted by name
 */
public class KafkaTopicConfigs {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Map<String, KafkaConfig> KAFKA_CONFIGS = new HashMap<>();

    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        PrintStream out = new PrintStream(new FileOutputStream(FileDescriptor.out), false, StandardCharsets.UTF_8);
        String line;
        while ((line = in.readLine()) != null) {
            ObjectNode answer;
            try {
                JsonNode cmd = JSON.readTree(line);
                answer = switch (cmd.get("op").asText()) {
                    case "schema" -> schema();
                    case "alter" -> alter(cmd);
                    case "effective" -> effective(cmd);
                    default -> throw new IllegalArgumentException("unknown op");
                };
            } catch (Throwable e) {
                answer = JSON.createObjectNode();
                Throwable cause = e;
                while (cause instanceof java.lang.reflect.InvocationTargetException && cause.getCause() != null) cause = cause.getCause();
                java.io.StringWriter sw = new java.io.StringWriter();
                cause.printStackTrace(new java.io.PrintWriter(sw));
                answer.put("fail", sw.toString());
            }
            out.println("R " + JSON.writeValueAsString(answer));
            out.flush();
        }
    }

    private static ObjectNode schema() {
        ObjectNode o = JSON.createObjectNode();
        ArrayNode topic = o.putArray("topic");
        for (ConfigDef.ConfigKey k : LogConfig.configKeys().values()) {
            ObjectNode e = topic.addObject();
            e.put("name", k.name);
            e.put("type", k.type.name());
            e.put("hasDefault", k.defaultValue != null);
            e.put("default", ConfigDef.convertToString(k.defaultValue, k.type));
            e.put("validator", k.validator == null ? "" : k.validator.toString());
            e.put("internal", k.internalConfig);
            ArrayNode syns = e.putArray("synonyms");
            for (ConfigSynonym s : ServerTopicConfigSynonyms.ALL_TOPIC_CONFIG_SYNONYMS.getOrDefault(k.name, List.of())) {
                ObjectNode so = syns.addObject();
                so.put("name", s.name());
                long factor = 1;
                if (s.converter() == ConfigSynonym.HOURS_TO_MILLISECONDS) factor = 3600000;
                else if (s.converter() == ConfigSynonym.MINUTES_TO_MILLISECONDS) factor = 60000;
                so.put("factor", factor);
            }
        }
        ObjectNode lists = o.putObject("brokerLists");
        for (ConfigDef.ConfigKey k : new TreeMap<>(KafkaConfig.configDef().configKeys()).values()) {
            if (k.type == ConfigDef.Type.LIST) {
                String def = k.hasDefault() ? ConfigDef.convertToString(k.defaultValue, k.type) : null;
                lists.put(k.name, def == null ? "" : def);
            }
        }
        ObjectNode sources = o.putObject("sources");
        for (DescribeConfigsResponse.ConfigSource s : DescribeConfigsResponse.ConfigSource.values()) {
            sources.put(s.name(), s.id());
        }
        return o;
    }

    private static Map<String, String> strings(JsonNode n) {
        Map<String, String> m = new LinkedHashMap<>();
        if (n != null) n.fields().forEachRemaining(e -> m.put(e.getKey(), e.getValue().isNull() ? null : e.getValue().asText()));
        return m;
    }

    private static KafkaConfig kafkaConfig(Map<String, String> statics) {
        return KAFKA_CONFIGS.computeIfAbsent(statics.toString(), s -> {
            Properties p = new Properties();
            p.put("process.roles", "controller");
            p.put("node.id", "1");
            p.put("controller.quorum.voters", "1@localhost:9093");
            p.put("controller.listener.names", "CONTROLLER");
            p.put("listeners", "CONTROLLER://localhost:9093");
            p.putAll(statics);
            return new KafkaConfig(p);
        });
    }

    private static Object call(Object target, String name, Object... args) throws Exception {
        for (Class<?> c = target.getClass(); c != null; c = c.getSuperclass()) {
            for (Method m : c.getDeclaredMethods()) {
                if (m.getName().equals(name) && m.getParameterCount() == args.length) {
                    m.setAccessible(true);
                    return m.invoke(target, args);
                }
            }
        }
        throw new NoSuchMethodException(name);
    }

    private static Object construct(String className) throws Exception {
        Constructor<?> c = Class.forName(className).getDeclaredConstructor();
        c.setAccessible(true);
        return c.newInstance();
    }

    @SuppressWarnings("unchecked")
    private static ObjectNode alter(JsonNode cmd) throws Exception {
        Map<String, String> statics = strings(cmd.get("static"));
        KafkaConfig kc = kafkaConfig(statics);
        SnapshotRegistry registry = new SnapshotRegistry(new LogContext());
        Object fb = construct("org.apache.kafka.controller.FeatureControlManager$Builder");
        call(fb, "setSnapshotRegistry", registry);
        call(fb, "setQuorumFeatures", new QuorumFeatures(1, QuorumFeatures.defaultSupportedFeatureMap(true), List.of(1)));
        Object features = call(fb, "build");
        short mv = cmd.path("cordonedUnsupported").asBoolean() ? MetadataVersion.IBP_4_2_IV1.featureLevel() : MetadataVersion.latestProduction().featureLevel();
        call(features, "replay", new FeatureLevelRecord().setName("metadata.version").setFeatureLevel(mv));
        if (cmd.path("elr").asBoolean()) {
            call(features, "replay", new FeatureLevelRecord().setName("eligible.leader.replicas.version").setFeatureLevel((short) 1));
        }
        KafkaConfigSchema schema = new KafkaConfigSchema(
            Map.of(ConfigResource.Type.TOPIC, LogConfig.configDefCopy(), ConfigResource.Type.BROKER, KafkaConfig.configDef()),
            ServerTopicConfigSynonyms.ALL_TOPIC_CONFIG_SYNONYMS);
        Object b = construct("org.apache.kafka.controller.ConfigurationControlManager$Builder");
        call(b, "setSnapshotRegistry", registry);
        call(b, "setKafkaConfigSchema", schema);
        call(b, "setValidator", new ControllerConfigurationValidator(kc));
        call(b, "setStaticConfig", new HashMap<String, Object>(statics));
        call(b, "setNodeId", 1);
        call(b, "setFeatureControl", features);
        call(b, "setSupportedConfigChecker", SupportedConfigChecker.TRUE);
        call(b, "setExistenceChecker", (java.util.function.Consumer<ConfigResource>) r -> { });
        call(b, "setAlterConfigPolicy", Optional.empty());
        Object ccm = call(b, "build");
        for (JsonNode r : cmd.path("existing")) {
            call(ccm, "replay", new ConfigRecord().setResourceType((byte) r.get("type").asInt())
                .setResourceName(r.get("name").asText()).setName(r.get("key").asText())
                .setValue(r.get("value").isNull() ? null : r.get("value").asText()));
        }
        ConfigResource res = new ConfigResource(ConfigResource.Type.forId((byte) cmd.get("resource").get("type").asInt()),
            cmd.get("resource").get("name").asText());
        boolean created = cmd.path("created").asBoolean();
        boolean forwarded = cmd.path("forwarded").asBoolean();
        Object result;
        if (cmd.path("legacy").asBoolean()) {
            Map<String, String> configs = new HashMap<>();
            for (JsonNode op : cmd.path("ops")) configs.put(op.get("key").asText(), op.get("value").isNull() ? null : op.get("value").asText());
            Map<ConfigResource, Map<String, String>> req = new HashMap<>();
            req.put(res, configs);
            result = call(ccm, "legacyAlterConfigs", req, created, forwarded);
        } else {
            Map<String, Map.Entry<AlterConfigOp.OpType, String>> ops = new HashMap<>();
            for (JsonNode op : cmd.path("ops")) {
                ops.put(op.get("key").asText(), new SimpleImmutableEntry<>(AlterConfigOp.OpType.forId((byte) op.get("op").asInt()),
                    op.get("value").isNull() ? null : op.get("value").asText()));
            }
            Map<ConfigResource, Map<String, Map.Entry<AlterConfigOp.OpType, String>>> req = new HashMap<>();
            req.put(res, ops);
            result = call(ccm, "incrementalAlterConfigs", req, created, forwarded);
        }
        ApiError err = ((Map<ConfigResource, ApiError>) call(result, "response")).get(res);
        ObjectNode o = JSON.createObjectNode();
        o.put("code", err.error().code());
        o.put("msg", err.message());
        ArrayNode recs = o.putArray("records");
        for (ApiMessageAndVersion mav : (List<ApiMessageAndVersion>) call(result, "records")) {
            ObjectNode r = recs.addObject();
            if (mav.message() instanceof ConfigRecord cr) {
                r.put("type", cr.resourceType());
                r.put("name", cr.resourceName());
                r.put("key", cr.name());
                r.put("value", cr.value());
            } else if (mav.message() instanceof ClearElrRecord ce) {
                r.put("clearElr", true);
                r.put("topic", ce.topicName());
            } else {
                r.put("other", mav.message().toString());
            }
        }
        return o;
    }

    private static ObjectNode effective(JsonNode cmd) {
        KafkaConfigSchema schema = new KafkaConfigSchema(
            Map.of(ConfigResource.Type.TOPIC, LogConfig.configDefCopy(), ConfigResource.Type.BROKER, KafkaConfig.configDef()),
            ServerTopicConfigSynonyms.ALL_TOPIC_CONFIG_SYNONYMS);
        Map<String, ConfigEntry> entries = schema.resolveEffectiveTopicConfigs(
            strings(cmd.get("static")), strings(cmd.get("cluster")), strings(cmd.get("node")), strings(cmd.get("topic")));
        ObjectNode o = JSON.createObjectNode();
        ArrayNode arr = o.putArray("entries");
        for (ConfigEntry e : new TreeMap<>(entries).values()) {
            ObjectNode n = arr.addObject();
            n.put("name", e.name());
            n.put("value", e.isSensitive() ? null : e.value());
            n.put("readOnly", e.isReadOnly());
            n.put("source", KafkaConfigSchema.translateConfigSource(e.source()).id());
            n.put("sensitive", e.isSensitive());
        }
        return o;
    }
}
