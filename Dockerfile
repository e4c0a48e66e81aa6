# The service image: Node 20 + npm for the install, Bun (from npm) to run.
FROM node:20-bookworm-slim
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY . .
ENV PORT=3000 DATA_DIR=/data
EXPOSE 3000
CMD ["npm", "start"]
