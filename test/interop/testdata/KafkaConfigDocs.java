import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.server.config.AbstractKafkaConfig;
import org.apache.kafka.server.config.DynamicBrokerConfig;
import org.apache.kafka.storage.internals.log.LogConfig;

import java.util.Map;
import java.util.TreeMap;

// KafkaConfigDocs prints, as JSON, what DescribeConfigs answers draw on in
// Kafka 4.4.0: every broker key of KafkaConfig's ConfigDef (type, default
// as ConfigDef.convertToString prints it, whether it is dynamic, its
// documentation, whether it is internal, its synonyms) and the documentation of every topic key. kraftd's
// controller/configs/describekeys.json is this output.
public class KafkaConfigDocs {
    public static void main(String[] args) throws Exception {
        ObjectMapper m = new ObjectMapper();
        ObjectNode out = m.createObjectNode();
        ArrayNode broker = out.putArray("broker");
        Map<String, String> defaults = ConfigDef.convertToStringMapWithPasswordValues(AbstractKafkaConfig.CONFIG_DEF.defaultValues());
        // In definition order: the order of a HashMap's keys sharing a bucket.
        for (ConfigDef.ConfigKey k : AbstractKafkaConfig.CONFIG_DEF.configKeys().values()) {
            ObjectNode o = broker.addObject();
            o.put("name", k.name);
            o.put("type", k.type.name());
            o.put("default", defaults.get(k.name));
            o.put("dynamic", DynamicBrokerConfig.ALL_DYNAMIC_CONFIGS.contains(k.name));
            o.put("internal", k.internalConfig);
            o.put("nonDynamic", org.apache.kafka.server.config.DynamicConfig.Broker.nonDynamicProps().contains(k.name));
            java.util.List<String> syn = DynamicBrokerConfig.brokerConfigSynonyms(k.name, true);
            if (!syn.equals(java.util.List.of(k.name))) {
                ArrayNode a = o.putArray("synonyms");
                syn.forEach(a::add);
            }
            o.put("doc", k.documentation);
        }
        // DynamicConfig.Broker's keys KafkaConfig lacks (the throttle rates):
        // KafkaConfig.configType falls back on them.
        ObjectNode extra = out.putObject("dynamicOnlyTypes");
        for (ConfigDef.ConfigKey k : new TreeMap<>(org.apache.kafka.server.config.DynamicConfig.Broker.configKeys()).values()) {
            if (!AbstractKafkaConfig.CONFIG_DEF.configKeys().containsKey(k.name)) extra.put(k.name, k.type.name());
        }
        ObjectNode topic = out.putObject("topicDocs");
        for (ConfigDef.ConfigKey k : new TreeMap<>(LogConfig.configKeys()).values()) {
            topic.put(k.name, k.documentation);
        }
        System.out.println(m.writerWithDefaultPrettyPrinter().writeValueAsString(out));
    }
}
