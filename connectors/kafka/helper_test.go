package kafka_test

const helperEnv = "KAFKA_SPEC_HELPER"
